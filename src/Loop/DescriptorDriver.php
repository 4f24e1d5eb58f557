<?php

declare(strict_types=1);

namespace Weft\Loop;

/**
 * A driver that can watch a raw file descriptor, one that has no PHP stream (a socket inside libcurl, a
 * stream whose resource an extension keeps to itself). The epoll driver does; the select driver cannot
 * (stream_select() takes streams only), and Weft\Hook\FdWaiter watches a dup()ed php://fd stream there.
 *
 * The caller owns the descriptor: it must cancel the watcher before closing it (a descriptor closed while
 * registered silently leaves the kernel's set, and its number may be reused by the next open()).
 */
interface DescriptorDriver extends Driver
{
    /** @param \Closure(string, int): void $callback receives the watcher id and the descriptor */
    public function onReadableFd(int $fd, \Closure $callback): string;

    /** @param \Closure(string, int): void $callback receives the watcher id and the descriptor */
    public function onWritableFd(int $fd, \Closure $callback): string;
}
