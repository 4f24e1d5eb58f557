<?php

declare(strict_types=1);

namespace Weft\Tests\Integration\Http;

/**
 * A throwaway document root for the static-file and gzip tests, with a secret next to it (outside),
 * symlinks into and out of it, dotfiles, and files on both sides of the streaming threshold.
 */
final class DocRoot
{
    public const SECRET = "TOP SECRET: outside the document root\n";
    public const BIG_SIZE = 40 * 1024 * 1024;

    public readonly string $base;
    public readonly string $root;

    public function __construct(bool $big = false)
    {
        $this->base = \sys_get_temp_dir() . '/weft-static-' . \bin2hex(\random_bytes(5));
        $this->root = $this->base . '/www';
        foreach ([$this->root, "$this->root/sub", "$this->root/.git", "$this->base/outside-dir"] as $dir) {
            \mkdir($dir, 0755, true);
        }
        \file_put_contents("$this->base/secret.txt", self::SECRET);
        \file_put_contents("$this->base/outside-dir/secret.txt", self::SECRET);
        \file_put_contents("$this->root/index.html", "<!doctype html><title>home</title>\n");
        \file_put_contents("$this->root/hello.txt", "Hello, static world\n");
        \file_put_contents("$this->root/sub/index.html", "<p>sub index</p>\n");
        \file_put_contents("$this->root/sub/page.html", "<p>sub page</p>\n");
        \file_put_contents("$this->root/style.css", \str_repeat("body { color: #333; margin: 0 auto; }\n", 100));
        \file_put_contents("$this->root/data.json", \json_encode(\array_fill(0, 300, ['key' => 'value', 'n' => 12345])));
        \file_put_contents("$this->root/photo.jpg", \str_repeat("\xff\xd8\xff\xe0 not really a jpeg ", 300));
        \file_put_contents("$this->root/.env", "DB_PASSWORD=hunter2\n");
        // A public/ folder's scripts: code, never served as text.
        \file_put_contents("$this->root/config.php", "<?php return ['password' => 'hunter2'];\n");
        \file_put_contents("$this->root/sub/legacy.phtml", "<?php \$password = 'hunter2'; ?>\n");
        \file_put_contents("$this->root/.git/config", "[core]\n");
        \file_put_contents("$this->root/%2e%2e", "a file literally named %2e%2e\n");
        \file_put_contents("$this->root/empty.txt", '');
        \file_put_contents("$this->root/bytes.bin", self::pattern(10_000));
        // Above StaticOptions::DEFAULT_BUFFER_LIMIT: streamed, and as text, compressed on the fly.
        \file_put_contents("$this->root/large.txt", \str_repeat("a line of a large text file, streamed in chunks\n", 60_000));
        \symlink("$this->base/secret.txt", "$this->root/link-out.txt");
        \symlink("$this->base/outside-dir", "$this->root/dir-out");
        \symlink("$this->root/hello.txt", "$this->root/link-in.txt");
        // Names without a dot that resolve to dotfiles: hidden all the same.
        \symlink("$this->root/.env", "$this->root/link-to-dotenv");
        \symlink("$this->root/.git", "$this->root/git-dir");
        if ($big) {
            $file = \fopen("$this->root/big.bin", 'wb');
            $block = self::pattern(1024 * 1024);
            for ($i = 0; $i < self::BIG_SIZE / (1024 * 1024); $i++) {
                // Each megabyte starts with its number, so a reordered or repeated chunk shows.
                \fwrite($file, \substr_replace($block, \sprintf('%08d', $i), 0, 8));
            }
            \fclose($file);
            // Text of the same order of size, for gzip on the fly: lines that differ, so it does not
            // compress to nothing.
            $file = \fopen("$this->root/big.txt", 'wb');
            for ($i = 0; $i < 24 * 1024; $i++) {
                \fwrite($file, \str_repeat(\sprintf("line %08d of a big text file %s\n", $i, \md5((string) $i)), 16));
            }
            \fclose($file);
        }
    }

    public function path(string $name): string
    {
        return "$this->root/$name";
    }

    public function remove(): void
    {
        \exec('rm -rf ' . \escapeshellarg($this->base));
    }

    /** Bytes that are not all alike, and reproducible. */
    private static function pattern(int $length): string
    {
        $out = '';
        for ($i = 0; \strlen($out) < $length; $i++) {
            $out .= \hash('sha256', (string) $i, true);
        }
        return \substr($out, 0, $length);
    }
}
