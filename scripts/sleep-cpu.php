<?php
// CPU per Weft\sleep() with many coroutines sleeping at once: 1,000 coroutines each sleeping 10 ms,
// ROUNDS times, on the epoll loop; prints the process's CPU time per sleep. What a request that suspends
// once pays for the suspension itself (timer, two Fiber switches, the loop's turn). Two checkouts can be
// compared with the same script:
//
//   taskset -c 0 php -d extension=ext/modules/weft.so -d opcache.enable_cli=1 -d opcache.jit=tracing \
//       -d opcache.jit_buffer_size=64M scripts/sleep-cpu.php [CHECKOUT] [ROUNDS]
declare(strict_types=1);

$root = (require __DIR__ . '/checkout.php')($argv[1] ?? null);
$rounds = (int) ($argv[2] ?? 100);

Weft\Loop\Loop::reset('epoll');
$coroutines = 1000;
$cpu = static function (): float {
    $u = getrusage();
    return $u['ru_utime.tv_sec'] * 1e6 + $u['ru_utime.tv_usec'] + $u['ru_stime.tv_sec'] * 1e6 + $u['ru_stime.tv_usec'];
};
Weft\run(static function () use ($coroutines, $rounds, $cpu): void {
    $group = new Weft\Coroutine\WaitGroup();
    for ($i = 0; $i < $coroutines; $i++) {
        $group->add();
        Weft\go(static function () use ($group, $rounds): void {
            for ($r = 0; $r < $rounds; $r++) {
                Weft\sleep(0.01);
            }
            $group->done();
        });
    }
    $start = $cpu();
    $group->wait();
    printf("%d coroutines x %d sleeps of 10 ms: %.2f us of CPU per sleep\n", $coroutines, $rounds, ($cpu() - $start) / ($coroutines * $rounds));
});
