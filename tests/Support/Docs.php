<?php

declare(strict_types=1);

namespace Weft\Tests\Support;

use PHPUnit\Framework\Assert;

/**
 * The documentation as the tests read it: README.md and the pages of docs/, by name. Every lookup fails
 * the test when what it looks for is not there, so a snippet test can never pass on a snippet that
 * moved away.
 */
final class Docs
{
    public const ROOT = __DIR__ . '/../..';

    /** README.md for 'README', else docs/NAME.md. */
    public static function page(string $name): string
    {
        $path = self::path($name);
        Assert::assertFileExists($path, "the documentation page $name");
        return (string) \file_get_contents($path);
    }

    public static function path(string $name): string
    {
        return $name === 'README' ? self::ROOT . '/README.md' : self::ROOT . "/docs/$name.md";
    }

    /** @return list<string> the names of the pages of docs/, without '.md' */
    public static function pages(): array
    {
        $names = \array_map(static fn (string $path): string => \basename($path, '.md'), \glob(self::ROOT . '/docs/*.md') ?: []);
        \sort($names);
        return $names;
    }

    /**
     * One section of a page: from its heading line (exactly "## Title") up to the next heading of the
     * same or a higher level, headings inside code blocks not counted.
     */
    public static function section(string $page, string $heading): string
    {
        $lines = \explode("\n", self::page($page));
        $level = \strspn($heading, '#');
        $start = \array_search($heading, $lines, true);
        Assert::assertNotFalse($start, "$page has the section '$heading'");
        $out = [$heading];
        $fence = false;
        foreach (\array_slice($lines, $start + 1) as $line) {
            if (\str_starts_with(\ltrim($line), '```')) {
                $fence = !$fence;
            } elseif (!$fence && \preg_match('/^(#+) /', $line, $m) === 1 && \strlen($m[1]) <= $level) {
                break;
            }
            $out[] = $line;
        }
        return \implode("\n", $out);
    }

    /**
     * The fenced code blocks of a text, in order, each with its language ('' when none) and its code
     * (the block's own indentation removed, so a block inside a list item reads as written).
     *
     * @return list<array{language: string, code: string}>
     */
    public static function codeBlocks(string $text): array
    {
        \preg_match_all('/^([ \t]*)```([a-z]*)\n(.*?)^\1```[ \t]*$/ms', $text, $matches, \PREG_SET_ORDER);
        $blocks = [];
        foreach ($matches as [, $indent, $language, $code]) {
            if ($indent !== '') {
                $code = (string) \preg_replace('/^' . \preg_quote($indent, '/') . '/m', '', $code);
            }
            $blocks[] = ['language' => $language, 'code' => $code];
        }
        return $blocks;
    }

    /**
     * The code of the one block of $language on $page whose first line starts with $firstLine (or, for
     * text, a section of a page); fails when there is none or more than one.
     */
    public static function snippet(string $page, string $language, string $firstLine, ?string $text = null): string
    {
        $found = \array_values(\array_filter(
            self::codeBlocks($text ?? self::page($page)),
            static fn (array $block): bool => $block['language'] === $language && \str_starts_with($block['code'], $firstLine),
        ));
        Assert::assertCount(1, $found, "$page has one $language snippet starting with: $firstLine");
        return $found[0]['code'];
    }

    /** $code without its first line (a snippet's "<?php // file name" marker). */
    public static function afterFirstLine(string $code): string
    {
        $end = \strpos($code, "\n");
        return $end === false ? '' : \substr($code, $end + 1);
    }

    /**
     * Asserts that every non-empty line of $snippet is a line of $file, in the same order. $exact compares
     * whole lines, indentation included; otherwise lines are compared without their leading and trailing
     * blanks (a snippet that shows an excerpt, indented as it reads best).
     */
    public static function assertExcerptOf(string $file, string $snippet, string $what, bool $exact = false): void
    {
        Assert::assertFileExists($file);
        $normal = $exact ? static fn (string $line): string => \rtrim($line, "\r") : 'trim';
        $lines = \array_map($normal, \file($file, \FILE_IGNORE_NEW_LINES) ?: []);
        $at = 0;
        $checked = 0;
        foreach (\explode("\n", $snippet) as $line) {
            if (\trim($line) === '') {
                continue;
            }
            $found = \array_search($normal($line), \array_slice($lines, $at, null, true), true);
            Assert::assertNotFalse($found, "$what: " . \basename($file) . " has the line, after the previous one: $line");
            $at = (int) $found + 1;
            $checked++;
        }
        Assert::assertGreaterThan(0, $checked, "$what has code to compare");
    }
}
