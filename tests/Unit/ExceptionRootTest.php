<?php

declare(strict_types=1);

namespace Weft\Tests\Unit;

use PHPUnit\Framework\TestCase;
use Weft\WeftException;

/** One exception root (DESIGN.md): every throwable Weft defines, in PHP or in the extension, is a WeftException. */
final class ExceptionRootTest extends TestCase
{
    public function testEveryThrowableClassUnderSrcCarriesTheMarker(): void
    {
        $throwables = $this->throwables();
        self::assertGreaterThan(10, \count($throwables), 'the scan found Weft\'s exception classes');
        $without = \array_values(\array_filter($throwables, static fn (string $c): bool => !\is_subclass_of($c, WeftException::class)));
        self::assertSame([], $without, 'these throwables do not implement Weft\\WeftException');
    }

    /** @return list<class-string<\Throwable>> every throwable class under src/ (the bridges aside) */
    private function throwables(): array
    {
        $root = \dirname(__DIR__, 2) . '/src';
        $throwables = [];
        $files = new \RecursiveIteratorIterator(new \RecursiveDirectoryIterator($root, \FilesystemIterator::SKIP_DOTS));
        foreach ($files as $file) {
            $path = (string) $file;
            if (!\str_ends_with($path, '.php') || \str_contains($path, '/Bridge/') || !\ctype_upper(\basename($path)[0])) {
                // The bridges' classes need the frameworks (not Weft's dependencies); lower-case files
                // (functions.php) hold no class and must not be included twice.
                continue;
            }
            $class = 'Weft\\' . \str_replace('/', '\\', \substr($path, \strlen($root) + 1, -4));
            if (!\class_exists($class)) {
                continue; // functions.php, interfaces, traits, enums
            }
            if (\is_subclass_of($class, \Throwable::class)) {
                $throwables[] = $class;
            }
        }
        return $throwables;
    }

    /**
     * One name, one class per concept: a client may subclass the family's class for context (its
     * message, isSafeToRetry()), never declare a second class of the same name beside it.
     */
    public function testEachConceptHasOneFamilyThatEveryClientSubclasses(): void
    {
        $families = [
            '/ConnectTimeout$/' => \Weft\Socket\ConnectTimeout::class,
            '/Connect(Exception|Failed)$/' => \Weft\Socket\ConnectException::class,
            '/Connection(Lost|Closed)$/' => \Weft\Socket\ConnectionLost::class,
            '/(?<!Connect)Timeout$/' => \Weft\Coroutine\Timeout::class,
        ];
        $checked = 0;
        $strays = [];
        foreach ($this->throwables() as $class) {
            $short = \substr($class, \strrpos($class, '\\') + 1);
            foreach ($families as $pattern => $family) {
                if (\preg_match($pattern, $short) === 1) {
                    $checked++;
                    if ($class !== $family && !\is_subclass_of($class, $family)) {
                        $strays[] = "$class is not a $family";
                    }
                    if (\str_ends_with($short, 'Timeout') && !\is_subclass_of($class, \Weft\TimeoutException::class)) {
                        $strays[] = "$class is not a Weft\\TimeoutException";
                    }
                }
            }
        }
        self::assertGreaterThan(8, $checked, 'the scan found the clients\' connect, lost and timeout classes');
        self::assertSame([], $strays, 'a second class for a concept Weft already names');
    }

    public function testTheExtensionsExceptionsCarryTheSameMarker(): void
    {
        if (!\extension_loaded('weft')) {
            self::markTestSkipped('the weft extension is not loaded (bash scripts/build-ext.sh)');
        }
        self::assertTrue(\interface_exists(WeftException::class, false), 'the extension declares the interface');
        self::assertTrue(\is_subclass_of(\Weft\Ext\ExitException::class, WeftException::class));
        self::assertTrue(\is_subclass_of(\Weft\Ext\EpollException::class, WeftException::class));
        self::assertTrue(\is_subclass_of(\Weft\Ext\ExitException::class, \Error::class), 'still an Error: catch (Exception) does not swallow it');
        // A preload script that includes the PHP declaration anyway must not redeclare it.
        require \dirname(__DIR__, 2) . '/src/WeftException.php';
    }
}
