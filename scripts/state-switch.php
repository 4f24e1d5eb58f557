<?php

// Prices one switch of the followed process-wide state (ProcessState) between two booted instances of
// the Laravel fixture app: `php scripts/state-switch.php N` makes N round trips (2N switches) after a
// warm-up. Run by scripts/state-switch.sh under callgrind for instructions per switch.
declare(strict_types=1);

$root = dirname(__DIR__);
require $root . '/vendor/autoload.php';
foreach ([
    'WEFT_APP_INSTANCES' => '2', 'APP_ENV' => 'production', 'APP_DEBUG' => '0', 'WEFT_LEAK_WARNINGS' => '0',
    'DB_CONNECTION' => 'mysql', 'DB_URL' => 'mysql://weft:weft@127.0.0.1:13306/weft',
] as $name => $value) {
    putenv("$name=$value");
}
$handler = require $root . '/var/fixtures/laravel-app/weft.php';
$instances = (new ReflectionProperty($handler, 'pool'))->getValue($handler);
$pool = (new ReflectionProperty($instances, 'pool'))->getValue($instances);
$a = $pool->borrow()->state;
$b = $pool->borrow()->state;
$scheduler = Weft\Coroutine\Scheduler::get();
for ($i = 0; $i < 100; $i++) {
    $scheduler->bind($a);
    $scheduler->bind($b);
}
$n = (int) ($argv[1] ?? 10000);
$start = hrtime(true);
for ($i = 0; $i < $n; $i++) {
    $scheduler->bind($a);
    $scheduler->bind($b);
}
$elapsed = hrtime(true) - $start;
if ($n > 0) {
    fprintf(STDERR, "%d followed values, %.2f µs a switch (wall clock)\n", count(Weft\Coroutine\ProcessState::names()), $elapsed / 1e3 / (2 * $n));
}
