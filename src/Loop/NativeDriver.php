<?php

declare(strict_types=1);

namespace Weft\Loop;

// Without the extension there is no parent class: this file then declares nothing, so that autoloading
// it (class_exists(), a scan of src/) answers "no such class" instead of failing.
if (!\class_exists(\Weft\Ext\Loop::class, false)) {
    return;
}

/**
 * The native loop: the weft extension's Weft\Ext\Loop (ext/weft_loop.c) implements every method of the
 * contract in C, and run() is one call into C that dispatches deferred calls, signals, the epoll wait,
 * ready streams and timers, calling each closure directly with no PHP code between two callbacks.
 *
 * This class only names the contract: an extension cannot declare at start-up that its class implements
 * an interface that Composer autoloads later, so the PHP side extends the C class instead.
 *
 * Behaviour is that of the PHP loop with an epoll backend (tests/Unit/Loop/DriverContract.php runs
 * against both): level-triggered epoll(7) through the extension's Weft\Ext\Epoll (any descriptor number;
 * a stream closed while watched wakes its watchers once, then they are cancelled; regular files are
 * always ready), raw descriptors (DescriptorDriver), pcntl for signals. After fork() the child must build
 * its own loop (Loop::reset()): waiting on, or adding to, an inherited one throws.
 */
final class NativeDriver extends \Weft\Ext\Loop implements DescriptorDriver
{
    // Whether it is available: DriverFactory::epollAvailable() (this class cannot even load without the
    // extension, so it cannot answer that itself).
}
