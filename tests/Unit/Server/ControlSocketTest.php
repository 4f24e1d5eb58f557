<?php

declare(strict_types=1);

namespace Weft\Tests\Unit\Server;

use Weft\Server\ControlSocket;
use Weft\Server\UnsafePath;
use Weft\Tests\Unit\Coroutine\CoroutineTestCase;

use function Weft\go;
use function Weft\run;

/** Both ends of the control socket's wire format: one command line in, one JSON document out. */
final class ControlSocketTest extends CoroutineTestCase
{
    private string $path;

    protected function setUp(): void
    {
        parent::setUp();
        $this->path = \sys_get_temp_dir() . '/weft-control-' . \getmypid() . '-' . \bin2hex(\random_bytes(4)) . '.sock';
    }

    protected function tearDown(): void
    {
        @\unlink($this->path);
        parent::tearDown();
    }

    public function testAServingMasterAnswersItsCommandsAndSaysWhichItDoesNotKnow(): void
    {
        $path = $this->path;
        [$status, $unknown, $mode] = run(static function () use ($path): array {
            $control = ControlSocket::open($path);
            $control->serve(['status' => static fn (): array => ['state' => 'running', 'path' => '/a/b', 'bytes' => "\xff"]]);
            // ask() is the client of a CLI process, which blocks: here it runs in a child, as `bin/weft status` does.
            $ask = static fn (string $command): mixed => go(static function () use ($path, $command): ?array {
                $pipe = \popen(\sprintf('%s -r %s', \PHP_BINARY, \escapeshellarg(
                    'require ' . \var_export(\dirname(__DIR__, 3) . '/vendor/autoload.php', true) . '; echo json_encode(Weft\Server\ControlSocket::ask('
                    . \var_export($path, true) . ', ' . \var_export($command, true) . ', 5.0));',
                )), 'r');
                \stream_set_blocking($pipe, false); // the loop must go on serving while the child asks
                $out = '';
                while (!\feof($pipe)) {
                    \Weft\sleep(0.01);
                    $out .= (string) \fread($pipe, 65536);
                }
                \pclose($pipe);
                return \json_decode($out, true);
            });
            $status = $ask('status');
            $unknown = $ask('frobnicate');
            $answers = [$status->join(), $unknown->join(), \fileperms($path) & 0777];
            $control->remove();
            return $answers;
        });
        self::assertSame(['state' => 'running', 'path' => '/a/b', 'bytes' => "\u{fffd}"], $status);
        self::assertSame(['error' => "unknown command 'frobnicate'"], $unknown);
        self::assertSame(0600, $mode);
        self::assertFileDoesNotExist($this->path, 'remove() takes the socket file away');
    }

    public function testWhatIsNotASocketIsNeverReplaced(): void
    {
        \symlink('/etc/passwd', $this->path);
        $this->expectException(UnsafePath::class);
        ControlSocket::open($this->path);
    }

    public function testNothingThereIsNoAnswer(): void
    {
        self::assertNull(ControlSocket::ask($this->path, 'status', 0.5));
    }
}
