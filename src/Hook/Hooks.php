<?php

declare(strict_types=1);

namespace Weft\Hook;

use Weft\Coroutine\ConcurrentUse;
use Weft\Coroutine\Scheduler;
use Weft\Ext\Hooks as Native;

/**
 * Switches the native extension's hooks on and off: ordinary blocking PHP calls (socket streams and what
 * is built on them: PDO MySQL, mysqli, phpredis, file_get_contents('http://...'); sleep(); curl; ...)
 * suspend the calling coroutine instead of blocking the worker. Outside a coroutine, in destructors run
 * by the GC and at shutdown every hooked call behaves exactly as without Weft.
 *
 * `bin/weft serve` enables them in coroutine mode (`--hooks all|none|LIST`); an application or a test
 * may call enable() itself. Without the extension nothing is hooked and enable() says so.
 */
final class Hooks
{
    /** The names `--hooks` takes, in the order they are listed. */
    public const KINDS = [
        'stream' => 0x01,
        'sleep' => 0x02,
        'curl' => 0x04,
        'dns' => 0x08,
        'exit' => 0x10,
    ];
    public const ALL = 0x1F;

    private static ?FdWaiter $waiter = null;

    /** Whether the loaded extension has hooks at all. */
    public static function isSupported(): bool
    {
        return \class_exists(Native::class, false);
    }

    /** The kinds this build of the extension can hook (0 without the extension). */
    public static function available(): int
    {
        return self::isSupported() ? Native::available() : 0;
    }

    /** The kinds hooked now. */
    public static function enabled(): int
    {
        return self::isSupported() ? Native::enabled() : 0;
    }

    /**
     * Parses `all`, `none` or a comma-separated list of kinds (`stream,sleep`).
     *
     * @throws UnknownHook naming the unknown kind and the valid ones
     */
    public static function parse(string $spec): int
    {
        $spec = \strtolower(\trim($spec));
        if ($spec === 'all') {
            return self::ALL;
        }
        if ($spec === 'none' || $spec === '') {
            return 0;
        }
        $kinds = 0;
        foreach (\explode(',', $spec) as $name) {
            $name = \trim($name);
            if (!isset(self::KINDS[$name])) {
                throw new UnknownHook(\sprintf(
                    'Unknown hook "%s": use all, none or a comma-separated list of %s',
                    $name,
                    \implode(', ', \array_keys(self::KINDS)),
                ));
            }
            $kinds |= self::KINDS[$name];
        }
        return $kinds;
    }

    /**
     * Installs the waiter and turns on the requested kinds that this build can hook.
     *
     * @return int the kinds now enabled (a subset of $kinds: see available())
     */
    public static function enable(int $kinds = self::ALL): int
    {
        if (!self::isSupported()) {
            return 0;
        }
        if ($kinds === 0) {
            self::disable();
            return 0;
        }
        $waiter = self::$waiter ??= new FdWaiter();
        // Everything the hooks ask PHP, handed over once: they look no class up by name and write no
        // message of ours.
        Native::install(
            wait: $waiter->wait(...),
            waitMany: $waiter->waitMany(...),
            forget: $waiter->forget(...),
            inCoroutine: FdWaiter::inCoroutine(...),
            exited: ExitTrap::exited(...),
            concurrentUse: static fn (string $hook, ?string $call, ?string $handle, ?string $holderCall): ConcurrentUse
                => ConcurrentUse::hooked($hook, $call, $handle, $holderCall, Scheduler::get()->running()),
        );
        $waiter->installed();
        return Native::enable($kinds);
    }

    /** Every hooked call behaves as without Weft again (a call suspended now finishes its wait first). */
    public static function disable(): void
    {
        if (self::isSupported()) {
            Native::uninstall();
        }
    }

    /** @return list<string> the names of the given kinds (default: those enabled now), in KINDS order */
    public static function names(?int $kinds = null): array
    {
        $kinds ??= self::enabled();
        $names = [];
        foreach (self::KINDS as $name => $bit) {
            if (($kinds & $bit) !== 0) {
                $names[] = $name;
            }
        }
        return $names;
    }

    /** For logs: "stream, sleep" or "none". */
    public static function describe(?int $kinds = null): string
    {
        $names = self::names($kinds);
        return $names === [] ? 'none' : \implode(', ', $names);
    }
}
