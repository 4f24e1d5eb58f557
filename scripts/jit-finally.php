<?php

// What a `finally` costs on a hot path under PHP's tracing JIT: instructions per call of the same small
// function written with try/finally and with catch-and-rethrow (Scheduler's docblock quotes the figures).
// Run each kind with 0 and with N calls and divide the difference of callgrind's totals by N:
//   J="-d opcache.enable_cli=1 -d opcache.jit=tracing -d opcache.jit_buffer_size=64M"
//   for k in finally catch; do for n in 0 300000; do
//     valgrind --tool=callgrind --smc-check=all --callgrind-out-file=/dev/null php $J scripts/jit-finally.php $k $n 2>&1 | grep Collected
//   done; done
// and again with -d opcache.enable_cli=0 for the interpreter's figures.

declare(strict_types=1);

function withFinally(int $i, array &$stack): int
{
    $stack[] = $i;
    try {
        return $i * 2 + 1;
    } finally {
        \array_pop($stack);
    }
}

function withCatch(int $i, array &$stack): int
{
    $stack[] = $i;
    try {
        $result = $i * 2 + 1;
    } catch (\Throwable $e) {
        \array_pop($stack);
        throw $e;
    }
    \array_pop($stack);
    return $result;
}

[, $kind, $calls] = $argv + [1 => 'finally', 2 => '1000000'];
$stack = [];
$sum = 0;
for ($i = 0, $n = (int) $calls; $i < $n; $i++) {
    $sum += $kind === 'finally' ? withFinally($i, $stack) : withCatch($i, $stack);
}
echo "$kind $calls $sum\n";
