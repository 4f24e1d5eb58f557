<?php
// Work per hooked wait, for callgrind: runs N hooked waits in coroutines of one checkout, so that two runs
// (N and 2N) differ by exactly N waits. Modes:
//   usleep  N x usleep(1) in one coroutine (sleep hook -> FdWaiter::waitMany() -> a timed wait)
//   sleep   N x Weft\sleep(0) in one coroutine (no hook: the same timed wait, for comparison)
//   pdo     N x SELECT 1 over PDO MySQL in one coroutine (stream hook, kept watcher; the idle poll may answer)
//   pdo2    N x SELECT 1 split over two coroutines with a connection each (whether a wait may hold the
//           loop depends on timing: the least steady mode)
//   pdoloop as pdo, with the idle poll off: every wait suspends and goes through the loop
// Instructions per wait, steadier than time on a shared machine:
//   for n in 2000 4000; do valgrind --tool=callgrind --callgrind-out-file=/tmp/cg.$n php -d extension=ext/modules/weft.so \
//       -d opcache.enable_cli=1 -d opcache.jit=tracing -d opcache.jit_buffer_size=64M scripts/hooked-wait-ir.php . usleep $n; done
//   then (Ir(4000) - Ir(2000)) / 2000, from the summary: line of each file.
declare(strict_types=1);

$root = realpath($argv[1] ?? dirname(__DIR__)) ?: exit("No such checkout\n");
$mode = $argv[2] ?? 'usleep';
$n = (int) ($argv[3] ?? 1000);
require $root . '/vendor/autoload.php';

Weft\Loop\Loop::reset('epoll');
Weft\Hook\Hooks::enable();
if ($mode === 'pdoloop') {
    Weft\Ext\Hooks::idleLoop(null);
}
$dsn = 'mysql:host=127.0.0.1;port=13306;dbname=weft';
Weft\run(static function () use ($mode, $n, $dsn): void {
    if ($mode === 'usleep') {
        for ($i = 0; $i < $n; $i++) {
            \usleep(1);
        }
        return;
    }
    if ($mode === 'sleep') {
        for ($i = 0; $i < $n; $i++) {
            Weft\sleep(0);
        }
        return;
    }
    $workers = $mode === 'pdo2' ? 2 : 1;
    $group = [];
    for ($w = 0; $w < $workers; $w++) {
        $group[] = Weft\go(static function () use ($n, $workers, $dsn): void {
            $pdo = new PDO($dsn, 'weft', 'weft');
            for ($i = 0; $i < intdiv($n, $workers); $i++) {
                $pdo->query('SELECT 1')->fetchColumn();
            }
        });
    }
    foreach ($group as $c) {
        $c->join();
    }
});
echo "done $mode $n\n";
