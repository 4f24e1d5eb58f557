<?php

declare(strict_types=1);

namespace Weft\Bench\Scenario;

use Weft\Bench\Environment;
use Weft\Bench\Report\Chart;
use Weft\Bench\Report\Check;
use Weft\Bench\Report\Column;
use Weft\Bench\Report\Findings;
use Weft\Bench\Report\Format;
use Weft\Bench\Row;

/**
 * docs/benchmarks.md, preload: a framework-sized application under fpm without opcache, with opcache, with opcache and
 * preload, and in the resident modes that load it once per worker.
 */
final class PreloadScenario extends HttpScenario
{
    public const PATH = '/m7/42';
    /** Gains smaller than this are within run-to-run noise. */
    private const NOISE = 0.03;

    /** config => [mode, opcache, preload] in ladder order */
    private const CONFIGS = [
        'fpm, no opcache' => ['fpm', 'off', false],
        'fpm + opcache' => ['fpm', 'on', false],
        'fpm + opcache + preload' => ['fpm', 'on', true],
        'sync' => ['sync', null, false],
        'coroutine' => ['coroutine', null, false],
    ];

    private ?string $dir = null;
    private ?string $app = null;
    /** @var array{files: int, classes: int}|null */
    private ?array $generated = null;
    private ?string $preloadFile = null;
    private ?string $preloadProblem = null;
    private bool $preloadTried = false;

    public function name(): string
    {
        return 'preload';
    }

    public function title(): string
    {
        return 'preload — opcache and preload under FPM, against resident modes';
    }

    public function description(): string
    {
        $size = $this->generated === null ? 'about 300 classes in about 60 files' : \sprintf('%d classes in %d files', $this->generated['classes'], $this->generated['files']);
        return "A generated framework-sized application ($size: interfaces, abstract bases, repositories, services, controllers, "
            . 'service providers, middleware, a container, a router, a classmap autoloader; booting registers every provider) answers '
            . 'GET ' . self::PATH . ' with JSON. Under fpm it is loaded for every request; the resident modes load it once per worker. '
            . 'Published: opcache is what matters most under FPM; preload adds about 10 % more; the resident modes avoid loading entirely.';
    }

    public function unavailable(Environment $env): ?string
    {
        return parent::unavailable($env);
    }

    public function rows(Environment $env): array
    {
        $s = $this->settings;
        $rows = [];
        foreach (self::CONFIGS as $config => [$mode]) {
            if ($s->modes !== null && !\in_array($mode, $s->modes, true)) {
                continue;
            }
            foreach ($mode === 'fpm' ? [null] : ($s->loops ?? self::defaultLoops($env)) as $loop) {
                foreach ($s->workers ?? [2] as $w) {
                    foreach ($s->axis([10, 100], [10, 100], $s->concurrency) as $c) {
                        $rows[] = new Row($this->name(), ['config' => $config, 'mode' => $mode, 'loop' => $loop, 'workers' => $w, 'concurrency' => $c]);
                    }
                }
            }
        }
        return $this->preSkipAll($rows, $env);
    }

    public function run(Row $row, Environment $env): void
    {
        $app = $this->app($env);
        [$mode, $opcache, $preload] = self::CONFIGS[$row->param('config')];
        $arguments = self::serveArguments($row);
        if ($mode === 'fpm') {
            $arguments[] = '--opcache';
            $arguments[] = (string) $opcache;
            if ($preload) {
                $file = $this->preloadFile($env, $app);
                if ($file === null) {
                    $row->skip((string) $this->preloadProblem);
                    return;
                }
                $arguments[] = '--preload';
                $arguments[] = $file;
            }
        }
        $check = static function (array $answer): ?string {
            return $answer['status'] !== 200
                ? "status {$answer['status']} (body: " . \substr($answer['body'], 0, 160) . ')'
                : AppGenerator::expectedShape($answer['body'], 7, 42);
        };
        $this->measureHttp($row, $env, $app, $arguments, $check, self::PATH);
    }

    private function app(Environment $env): string
    {
        if ($this->app === null) {
            $this->dir = \sys_get_temp_dir() . '/weft-bench-app-' . \getmypid() . '-' . \bin2hex(\random_bytes(3));
            $generated = AppGenerator::generate($this->dir);
            $this->generated = ['files' => $generated['files'], 'classes' => $generated['classes']];
            $this->app = $generated['path'];
        }
        return $this->app;
    }

    /** Writes the preload script once with `bin/weft preload`; null (and the reason kept) when that fails. */
    private function preloadFile(Environment $env, string $app): ?string
    {
        if ($this->preloadTried) {
            return $this->preloadFile;
        }
        $this->preloadTried = true;
        $file = \dirname($app) . '/preload.php';
        $base = $env->logBase('preload-script');
        $process = $env->processes->start([$env->php(), $env->weftBin(), 'preload', $app, '--out', $file, '--path', self::PATH], "$base.out", "$base.log");
        try {
            if (!$process->wait(120.0)) {
                $this->preloadProblem = 'bin/weft preload did not finish within 120 s';
            } elseif ($process->exitCode() !== 0 || !\is_file($file)) {
                $this->preloadProblem = 'bin/weft preload failed (exit ' . $process->exitCode() . '): ' . ($process->stderrTail(2) ?: \trim($process->stdout()));
            } else {
                $this->preloadFile = $file;
            }
        } finally {
            $process->terminate(0.5);
            $env->processes->forget($process);
        }
        return $this->preloadFile;
    }

    public function notes(Environment $env): array
    {
        $notes = [];
        if ($this->preloadFile !== null) {
            $notes[] = 'Preload script written by `bin/weft preload APP.php --out FILE --path ' . self::PATH . '`.';
        }
        $notes[] = 'fpm rows run php-fpm with the settings `serve --mode fpm` writes (opcache per row); the resident rows run with the JIT flags above.';
        return $notes;
    }

    public function finish(Environment $env): void
    {
        parent::finish($env);
        if ($this->dir !== null && \is_dir($this->dir)) {
            self::remove($this->dir);
        }
    }

    private static function remove(string $dir): void
    {
        foreach (new \RecursiveIteratorIterator(new \RecursiveDirectoryIterator($dir, \FilesystemIterator::SKIP_DOTS), \RecursiveIteratorIterator::CHILD_FIRST) as $entry) {
            $entry->isDir() ? @\rmdir($entry->getPathname()) : @\unlink($entry->getPathname());
        }
        @\rmdir($dir);
    }

    public function columns(): array
    {
        return [
            Column::param('configuration', 'config'),
            Column::param('loop', 'loop'),
            Column::param('workers', 'workers'),
            Column::param('conc.', 'concurrency'),
            ...Column::http(),
            ...$this->abColumns(),
            Column::status(),
        ];
    }

    public function charts(): array
    {
        return [
            new Chart('preload-rps.svg', 'preload: requests/s against concurrency', 'concurrency', 'concurrent connections', 'rps', 'requests/s', ['config', 'loop', 'workers']),
            new Chart('preload-p99.svg', 'preload: p99 latency against concurrency', 'concurrency', 'concurrent connections', 'p99_ms', 'p99 latency (ms)', ['config', 'loop', 'workers']),
        ];
    }

    /** @param list<Row> $rows @return array<string, Row> the best row of each configuration, in ladder order */
    private static function ladder(array $rows): array
    {
        $ladder = [];
        foreach (\array_keys(self::CONFIGS) as $config) {
            $best = Findings::best(Findings::ok($rows, ['config' => $config]));
            if ($best !== null) {
                $ladder[$config] = $best;
            }
        }
        return $ladder;
    }

    public function findings(array $rows): array
    {
        $ladder = self::ladder($rows);
        if ($ladder === []) {
            return [Findings::NOTHING_RAN];
        }
        $steps = [];
        $previous = null;
        foreach ($ladder as $config => $row) {
            $steps[] = \sprintf('%s %s req/s (PSS %s)%s', $config, Format::rate($row->number('rps')), Format::bytes($row->number('pss_bytes')), $previous === null ? '' : ' ' . Format::change($previous->number('rps'), $row->number('rps')));
            $previous = $row;
        }
        $out = ['The ladder, best row of each configuration: ' . \implode(' → ', $steps) . '.'];
        $out[] = Findings::winner(Findings::ok($rows), 'config') . '.';
        $cpu = Findings::cpuPerRequest(Findings::ok($rows), 'config');
        if ($cpu !== null) {
            $out[] = $cpu;
        }
        $out[] = Findings::errorsLine($rows);
        return $out;
    }

    public function checks(array $rows): array
    {
        $ladder = self::ladder($rows);
        $checks = [];
        $missing = \array_diff(\array_keys(self::CONFIGS), \array_keys($ladder));
        $checks[] = new Check('the ladder of requests/s and memory, in one table', $missing === [] ? true : null, $missing === []
            ? 'all five configurations measured, with requests/s and RSS/PSS'
            : 'not measured: ' . \implode(', ', $missing));
        $none = $ladder['fpm, no opcache'] ?? null;
        $opcache = $ladder['fpm + opcache'] ?? null;
        $preload = $ladder['fpm + opcache + preload'] ?? null;
        $gain = static fn (Row $from, Row $to): float => $to->number('rps') / \max(1e-9, $from->number('rps')) - 1;

        $claim = 'opcache is what matters most under FPM (its gain over no opcache exceeds the gain of preload over opcache)';
        if ($none === null || $opcache === null) {
            $checks[] = Check::unknown($claim, 'fpm with and without opcache did not both run');
        } elseif ($preload === null) {
            $checks[] = new Check($claim, null, 'opcache: ' . Format::change($none->number('rps'), $opcache->number('rps')) . '; the preload row did not run');
        } else {
            $checks[] = new Check($claim, $gain($none, $opcache) > $gain($opcache, $preload), \sprintf('opcache %s, preload on top %s', Format::change($none->number('rps'), $opcache->number('rps')), Format::change($opcache->number('rps'), $preload->number('rps'))));
        }

        $claim = \sprintf('preload adds throughput over fpm + opcache (more than %d %%, the noise; published: about 10 %%)', (int) (self::NOISE * 100));
        $checks[] = $opcache === null || $preload === null
            ? Check::unknown($claim, 'fpm + opcache with and without preload did not both run')
            : new Check($claim, $gain($opcache, $preload) > self::NOISE, 'measured ' . Format::change($opcache->number('rps'), $preload->number('rps')));

        $claim = 'the resident modes avoid loading: each is faster than the best fpm configuration';
        $fpm = Findings::best(\array_values(\array_filter($ladder, static fn (Row $r) => $r->param('mode') === 'fpm')));
        $resident = \array_filter($ladder, static fn (Row $r) => $r->param('mode') !== 'fpm');
        if ($fpm === null || $resident === []) {
            $checks[] = Check::unknown($claim, 'fpm and resident rows did not both run');
        } else {
            $failing = [];
            $parts = [];
            foreach ($resident as $config => $row) {
                if ($row->number('rps') <= $fpm->number('rps')) {
                    $failing[] = (string) $config;
                }
                $parts[] = \sprintf('%s %s (%s)', $config, Format::rate($row->number('rps')), Format::times($row->number('rps') / \max(1e-9, $fpm->number('rps'))));
            }
            $checks[] = new Check($claim, $failing === [], \sprintf('best fpm (%s) %s req/s; ', $fpm->param('config'), Format::rate($fpm->number('rps'))) . \implode(', ', $parts), $failing);
        }
        return $checks;
    }
}
