<?php

declare(strict_types=1);

namespace Weft\Tests\Integration\Docs;

use PHPUnit\Framework\TestCase;
use Weft\Tests\Support\Docs;

/** The README as the front door and the pages of docs/ as one set: the map, the links, the folder map, the examples. */
final class DocsTest extends TestCase
{
    /** The snippets that show an example file: each must be found, and each must be that file's code. */
    private const EXAMPLES = ['hello.php', 'static-site.php', 'websocket-echo.php', 'websocket-hub-chat.php'];

    public function testTheReadmeIsShortAndMapsEveryPage(): void
    {
        $readme = Docs::page('README');
        self::assertLessThanOrEqual(250, \substr_count($readme, "\n"), 'README.md is the front door: the rest belongs in docs/');
        self::assertNotSame([], Docs::pages());
        foreach (Docs::pages() as $page) {
            self::assertStringContainsString("](docs/$page.md)", $readme, "the README's map links docs/$page.md");
        }
    }

    /** CI (.ci/run) runs the README's two commands, as a fresh machine would, then the sanitizer script. */
    public function testCiRunsTheReadmesTwoCommandsAndTheSanitizerScript(): void
    {
        $block = Docs::snippet('README', 'sh', 'bash scripts/setup.sh', Docs::section('README', '## The two commands'));
        $commands = \array_values(\array_filter(\array_map(
            static fn (string $line): string => \trim((string) \preg_replace('/\s#.*$/', '', $line)),
            \explode("\n", $block),
        )));
        self::assertSame(['bash scripts/setup.sh && bin/weft serve examples/hello.php', 'composer test'], $commands);
        $ci = \array_map(
            static fn (string $line): string => \trim((string) \preg_replace('/\s#.*$/', '', $line)),
            \file(Docs::ROOT . '/.ci/run', \FILE_IGNORE_NEW_LINES) ?: [],
        );
        self::assertContains('bash scripts/setup.sh', $ci);
        self::assertContains('composer test', $ci);
        // The extension's tests and bin/weft fuzz under valgrind, once composer test has built and tested it.
        self::assertContains('bash scripts/ext-memcheck.sh', $ci);
        self::assertGreaterThan(\array_search('composer test', $ci, true), \array_search('bash scripts/ext-memcheck.sh', $ci, true));
        self::assertStringContainsString('bash scripts/ext-memcheck.sh', Docs::section('README', '## The two commands'));
        self::assertSame('bash scripts/test.sh', \json_decode((string) \file_get_contents(Docs::ROOT . '/composer.json'), true)['scripts']['test']);
    }

    /** Every relative link of the README and docs/ names a file that exists and, in a page, a heading it has. */
    public function testEveryLinkBetweenPagesResolves(): void
    {
        $pages = ['README' => Docs::path('README')];
        foreach (Docs::pages() as $page) {
            $pages[$page] = Docs::path($page);
        }
        $anchors = [];
        $checked = 0;
        foreach ($pages as $name => $path) {
            $text = Docs::page($name);
            \preg_match_all('/\[[^\]]*\]\(([^)\s]+)\)/', self::withoutCode($text), $links);
            foreach ($links[1] as $link) {
                if (\preg_match('/^[a-z][a-z0-9+.-]*:/', $link) === 1) {
                    continue; // https:, mailto:
                }
                [$file, $fragment] = \array_pad(\explode('#', $link, 2), 2, null);
                $target = $file === '' ? $path : \dirname($path) . '/' . $file;
                self::assertFileExists($target, "$name links $link");
                if ($fragment !== null && \str_ends_with($target, '.md')) {
                    $real = (string) \realpath($target);
                    $anchors[$real] ??= self::anchors((string) \file_get_contents($real));
                    self::assertContains($fragment, $anchors[$real], "$name links $link: " . \basename($target) . ' has no such heading');
                }
                $checked++;
            }
        }
        self::assertGreaterThan(50, $checked, 'the pages link each other');
    }

    /** The folder map of docs/architecture.md names every folder of src/ and every C file of ext/. */
    public function testTheFolderMapMatchesTheCode(): void
    {
        $map = Docs::snippet('architecture', '', 'src/', Docs::section('architecture', '## Folders'));
        $folders = \array_map('basename', \glob(Docs::ROOT . '/src/*', \GLOB_ONLYDIR) ?: []);
        self::assertContains('Hook', $folders);
        foreach ($folders as $folder) {
            self::assertMatchesRegularExpression('/^src\/' . \preg_quote($folder, '/') . '\s/m', $map, "the folder map has a line for src/$folder");
        }
        self::assertMatchesRegularExpression('/^ext\/\s/m', $map, 'the folder map has a line for ext/');
        $sources = \array_map('basename', \glob(Docs::ROOT . '/ext/*.c') ?: []);
        self::assertContains('weft_epoll.c', $sources);
        foreach ($sources as $source) {
            self::assertMatchesRegularExpression('/(?<![\w\/])' . \preg_quote($source, '/') . '(?![\w.])/', $map, "the folder map says what ext/$source is");
        }
    }

    /** A snippet headed "<?php // examples/NAME.php" shows that file's code, line by line in order, on every page. */
    public function testEveryExampleSnippetIsTheExamplesCode(): void
    {
        $shown = [];
        foreach (\array_merge(['README'], Docs::pages()) as $page) {
            foreach (Docs::codeBlocks(Docs::page($page)) as $block) {
                if ($block['language'] === 'php' && \preg_match('#^<\?php // examples/([\w.-]+\.php)\n#', $block['code'], $m) === 1) {
                    Docs::assertExcerptOf(Docs::ROOT . "/examples/$m[1]", Docs::afterFirstLine($block['code']), "the snippet of examples/$m[1] on $page");
                    $shown[$m[1]] = true;
                }
            }
        }
        foreach (self::EXAMPLES as $example) {
            self::assertArrayHasKey($example, $shown, "a page shows examples/$example");
        }
    }

    /** Every PHP snippet parses, the fragments too (those that no test runs or compares with a file). */
    public function testEveryPhpSnippetParses(): void
    {
        $parsed = 0;
        foreach (\array_merge(['README'], Docs::pages()) as $page) {
            foreach (Docs::codeBlocks(Docs::page($page)) as $block) {
                if ($block['language'] !== 'php') {
                    continue;
                }
                $code = \str_starts_with($block['code'], '<?php') ? $block['code'] : "<?php\n" . $block['code'];
                try {
                    \token_get_all($code, \TOKEN_PARSE);
                } catch (\ParseError $e) {
                    self::fail("a PHP snippet of $page does not parse: {$e->getMessage()} (line {$e->getLine()}):\n$code");
                }
                $parsed++;
            }
        }
        self::assertGreaterThanOrEqual(14, $parsed, 'the PHP snippets of the README and docs/');
    }

    /** The anchors a page's headings get on GitHub (and explicit <a id>s). @return list<string> */
    private static function anchors(string $text): array
    {
        $anchors = [];
        $seen = [];
        foreach (\explode("\n", self::withoutCode($text)) as $line) {
            if (\preg_match('/^#{1,6} (.+)$/', $line, $m) === 1) {
                $slug = \str_replace(' ', '-', (string) \preg_replace('/[^\p{L}\p{N}_\- ]/u', '', \mb_strtolower(\trim($m[1]))));
                $n = $seen[$slug] ?? 0;
                $seen[$slug] = $n + 1;
                $anchors[] = $n === 0 ? $slug : "$slug-$n";
            }
        }
        \preg_match_all('/<a id="([^"]+)"/', $text, $ids);
        return \array_merge($anchors, $ids[1]);
    }

    private static function withoutCode(string $text): string
    {
        return (string) \preg_replace('/^([ \t]*)```.*?^\1```[ \t]*$/ms', '', $text);
    }
}
