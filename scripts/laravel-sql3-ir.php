<?php

// A Laravel `/sql3` request (three queries through the hooked PDO to MariaDB) through Weft's real bridge,
// in one process, without HTTP: for callgrind, so that two runs that differ only in their request count
// give the instructions of one steady-state request (boot and warm-up cancel out).
//
//   php -d extension=ext/modules/weft.so -d opcache.enable_cli=1 scripts/laravel-sql3-ir.php MODE REQUESTS [CONNS] [INSTANCES] [ROUTE]
//
// MODE sync: one request at a time, the hooks off (as a sync worker: its queries block); co: CONNS
// requests at once (default 100) over a pool of INSTANCES (default 16), with InstancePool's admission,
// as a coroutine worker. Prints the requests served. By hand:
//
//   for n in 200 700; do valgrind --tool=callgrind --callgrind-out-file=/tmp/cg.co.$n php -d extension=ext/modules/weft.so \
//       -d opcache.enable_cli=1 scripts/laravel-sql3-ir.php co $n; done      # then (Ir(700) - Ir(200)) / 500
//
// Needs the fixtures (scripts/fixtures.sh) and MariaDB (scripts/services.sh; the test table is seeded here); `bash scripts/laravel-sql3-ir.sh`
// runs both modes. WEFT_IR_APP=symfony-app runs the Symfony fixture instead (its routes are the same).
declare(strict_types=1);

$app = getenv('WEFT_IR_APP') ?: 'laravel-app';
if (!in_array($app, ['laravel-app', 'symfony-app'], true)) {
    fwrite(STDERR, "WEFT_IR_APP is laravel-app or symfony-app, not $app\n");
    exit(2);
}

$root = dirname(__DIR__);
require $root . '/vendor/autoload.php';
// WEFT_SRC (a src/ folder of another build, e.g. from `git archive REV src`): Weft's classes from there,
// to compare two builds with the same harness and app.
$src = getenv('WEFT_SRC');
if (is_string($src) && $src !== '') {
    // The app's own autoloader maps Weft\ too and registers itself first: load it now, then go before it.
    require $root . "/var/fixtures/$app/vendor/autoload.php";
    spl_autoload_register(static function (string $class) use ($src): void {
        if (str_starts_with($class, 'Weft\\')) {
            $file = $src . '/' . str_replace('\\', '/', substr($class, 5)) . '.php';
            if (is_file($file)) {
                require $file;
            }
        }
    }, true, true);
}

$mode = $argv[1] ?? 'co';
$total = (int) ($argv[2] ?? 200);
$conns = $mode === 'sync' ? 1 : (int) ($argv[3] ?? 100);
$instances = $mode === 'sync' ? 1 : (int) ($argv[4] ?? 16);
$route = $argv[5] ?? '/sql3';
const WARM_UP = 100;

foreach ([
    'WEFT_APP_INSTANCES' => (string) $instances, 'APP_ENV' => $app === 'laravel-app' ? 'production' : 'prod', 'APP_DEBUG' => '0', 'WEFT_LEAK_WARNINGS' => '0',
    'DB_CONNECTION' => 'mysql', 'DB_URL' => getenv('WEFT_SQL3_URL') ?: 'mysql://weft:weft@127.0.0.1:13306/weft',
] as $name => $value) {
    putenv("$name=$value");
    $_SERVER[$name] = $_ENV[$name] = $value;
}
Weft\Loop\Loop::reset(extension_loaded('weft') ? 'epoll' : 'select');
// The table /sql3 reads, as the bench seeds it (created and filled once; both runs of a pair do the same).
putenv('DATABASE_URL=' . getenv('DB_URL'));
Weft\Bench\Scenario\Sql3Scenario::seed();
// As `serve` does: the hooks are for coroutine mode; a sync worker's queries block.
if (extension_loaded('weft') && $mode !== 'sync') {
    Weft\Hook\Hooks::enable();
}
$handler = require $root . "/var/fixtures/$app/weft.php";
// WEFT_SQL3_SWITCHES=1: also count the switches of the followed state (a followed value whose getter
// counts: a switch reads every value once). It adds a closure call to each switch: leave it off under callgrind.
$switches = 0;
if (getenv('WEFT_SQL3_SWITCHES') === '1') {
    Weft\Coroutine\ProcessState::follow('weft.sql3-ir.switches', static function () use (&$switches): int {
        return ++$switches;
    }, static function (mixed $value): void {
    });
}

$writer = new class () implements Weft\Http\Message\BodyWriter {
    public int $bytes = 0;

    public function write(string $chunk): void
    {
        $this->bytes += strlen($chunk);
    }
};

$served = 0;
$failed = 0;
$run = static function (int $count) use ($handler, $writer, $conns, $route, &$served, &$failed): void {
    $left = $count;
    $group = [];
    for ($c = 0; $c < $conns; $c++) {
        $group[] = Weft\go(static function () use ($handler, $writer, $route, &$left, &$served, &$failed): void {
            while ($left > 0) {
                --$left;
                $response = $handler(new Weft\Http\Message\Request('GET', $route, "\r\nHost: localhost"));
                if ($response->isStreamed()) {
                    ($response->producer())($writer);
                }
                $response->status() === 200 ? ++$served : ++$failed;
            }
        });
    }
    foreach ($group as $coroutine) {
        $coroutine->join();
    }
};
// WEFT_SQL3_IN_FLIGHT=1: also sample, every millisecond of the measured run, how many requests are in
// the framework at once (InstancePool::load()), and print their average, their spread and the
// instances booted (coroutine mode). The sampler's timer adds work: leave it off under callgrind.
$inFlight = [];
$pool = getenv('WEFT_SQL3_IN_FLIGHT') === '1' && $mode !== 'sync' ? (new ReflectionProperty($handler, 'pool'))->getValue($handler) : null;
Weft\run(static function () use ($run, $total, $pool, &$inFlight): void {
    $run(WARM_UP);
    $done = false;
    $sampler = $pool === null ? null : Weft\go(static function () use ($pool, &$inFlight, &$done): void {
        while (!$done) {
            Weft\sleep(0.001);
            $inFlight[] = $pool->load()['inFlight'];
        }
    });
    $run($total);
    $done = true;
    $sampler?->join();
});
fprintf(STDERR, "%s: %d requests served after %d of warm-up, %d failed, %d bytes\n", $mode, $served - WARM_UP, WARM_UP, $failed, $writer->bytes);
if (getenv('WEFT_SQL3_SWITCHES') === '1') {
    fprintf(STDERR, "%s: %.2f switches a request (warm-up included)\n", $mode, $switches / max(1, $served));
}
if ($pool !== null && $inFlight !== []) {
    sort($inFlight);
    $at = static fn (float $q): int => $inFlight[(int) floor($q * (count($inFlight) - 1))];
    fprintf(STDERR, "%s: requests in the framework at once, %d samples: average %.1f, 10th/50th/90th percentile %d/%d/%d, most %d; %d instances booted\n",
        $mode, count($inFlight), array_sum($inFlight) / count($inFlight), $at(0.1), $at(0.5), $at(0.9), max($inFlight), $pool->booted());
}
