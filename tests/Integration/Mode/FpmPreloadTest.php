<?php

declare(strict_types=1);

namespace Weft\Tests\Integration\Mode;

/** `bin/weft preload` on a small autoloaded application, then php-fpm started with the script. */
final class FpmPreloadTest extends FpmTestCase
{
    private const APP = self::FIXTURES . '/preload-app';
    private const LOADED_ON_GET = ['Controller', 'BaseController', 'Greets', 'GreetingController', 'Router'];

    private string $dir = '';

    protected function setUp(): void
    {
        $this->dir = self::scratch();
    }

    protected function tearDown(): void
    {
        self::removeTree($this->dir);
    }

    public function testTheScriptListsWhatTheAppLoadsInDependencyOrder(): void
    {
        $out = $this->dir . '/preload.php';
        [$code, $stdout, $stderr] = ServerProcess::run(['preload', self::APP . '/app.php', '--out', $out]);
        self::assertSame(0, $code, $stderr);
        self::assertStringContainsString("Wrote $out", $stdout);
        self::assertStringContainsString('Use it with: bin/weft serve ' . \realpath(self::APP . '/app.php') . " --mode fpm --preload $out", $stdout);
        self::assertMatchesRegularExpression('/Check: opcache preloaded \d+ classes/', $stdout);
        self::assertSame('', $stderr, 'nothing to skip, nothing that fails to link');

        $script = (string) \file_get_contents($out);
        self::assertStringContainsString("--mode fpm --preload $out", $script);
        $position = [];
        foreach (self::LOADED_ON_GET as $class) {
            $file = \realpath(self::APP . "/src/$class.php");
            $position[$class] = \strpos($script, '$preload(' . \var_export($file, true) . ');');
            self::assertNotFalse($position[$class], "$class is preloaded");
        }
        self::assertStringNotContainsString('StatusController', $script, 'not loaded while answering GET /');
        self::assertStringNotContainsString('preload-probe', $script);
        self::assertLessThan($position['BaseController'], $position['Controller'], 'interfaces first');
        self::assertLessThan($position['GreetingController'], $position['BaseController'], 'parents first');
        self::assertLessThan($position['GreetingController'], $position['Greets'], 'traits first');
        // Weft's own classes on the front controller's path are in it too.
        foreach (['Http/Message/Request.php', 'Http/Message/Response.php', 'Mode/Fpm/FrontController.php', 'Mode/Fpm/PhpSapiOutput.php'] as $file) {
            self::assertStringContainsString(\var_export(\realpath(__DIR__ . '/../../../src/' . $file), true), $script);
        }
        \exec(\escapeshellarg(\PHP_BINARY) . ' -l ' . \escapeshellarg($out), $lint, $lintCode);
        self::assertSame(0, $lintCode);
    }

    public function testDefaultOutputIsBesideTheApp(): void
    {
        // A copy: the default would write into the fixtures.
        \mkdir($this->dir . '/app/src', 0777, true);
        foreach (\glob(self::APP . '/src/*.php') ?: [] as $file) {
            \copy($file, $this->dir . '/app/src/' . \basename($file));
        }
        \copy(self::APP . '/app.php', $this->dir . '/app/app.php');
        [$code, , $stderr] = ServerProcess::run(['preload', $this->dir . '/app/app.php', '--check=off']);
        self::assertSame(0, $code, $stderr);
        self::assertFileExists($this->dir . '/app/app-preload.php');
    }

    public function testBadUse(): void
    {
        [$code, , $stderr] = ServerProcess::run(['preload']);
        self::assertSame(2, $code);
        self::assertStringContainsString('preload needs an application file', $stderr);
        [$code, , $stderr] = ServerProcess::run(['preload', $this->dir . '/missing.php']);
        self::assertSame(2, $code);
        self::assertStringContainsString('not found', $stderr);
        \file_put_contents($this->dir . '/broken.php', '<?php return 42;');
        [$code, , $stderr] = ServerProcess::run(['preload', $this->dir . '/broken.php', '--out', $this->dir . '/p.php']);
        self::assertSame(1, $code);
        self::assertStringContainsString('must return a handler', $stderr);
        self::assertFileDoesNotExist($this->dir . '/p.php');
    }

    public function testPhpFpmStartsWithTheScriptAndHasTheClassesPreloaded(): void
    {
        self::requireFpm();
        $out = $this->dir . '/preload.php';
        [$code, , $stderr] = ServerProcess::run(['preload', self::APP . '/app.php', '--out', $out, '--check=off']);
        self::assertSame(0, $code, $stderr);

        $server = ServerProcess::start([
            'serve', self::APP . '/app.php', '--mode', 'fpm', '--port', '0', '--workers', '2',
            '--pid-file', $this->dir . '/weft.pid', '--preload', $out,
        ]);
        self::assertSame(['greeting' => 'Hello World'], \json_decode(HttpConnection::get($server->port, '/')->body, true));
        $status = \json_decode(HttpConnection::get($server->port, '/preloaded')->body, true);
        self::assertTrue($status['opcache']);
        foreach (self::LOADED_ON_GET as $class) {
            self::assertContains("PreloadFixture\\$class", $status['preloaded']);
        }
        self::assertContains('Weft\Http\Message\Request', $status['preloaded']);
        self::assertNotContains('PreloadFixture\StatusController', $status['preloaded']);
        self::assertSame($out, self::serverStatus($this->dir . '/weft.pid')['master']['preload']);
        $server->kill();
        self::assertSame(0, $server->wait(0));
        self::assertStringNotContainsString('weft preload: skipped', $server->stderr());
    }

    public function testPreloadNeedsOpcache(): void
    {
        \touch($this->dir . '/p.php');
        [$code, , $stderr] = ServerProcess::run([
            'serve', self::APP . '/app.php', '--mode', 'fpm', '--opcache', 'off', '--preload', $this->dir . '/p.php', '--pid-file', $this->dir . '/weft.pid',
        ]);
        self::assertSame(2, $code);
        self::assertStringContainsString("'--preload' needs opcache", $stderr);
    }
}
