<?php

declare(strict_types=1);

namespace Weft\Cli;

use Weft\Http\Fuzz\ConnectionOracle;
use Weft\Http\Fuzz\Fuzzer;
use Weft\Http\Fuzz\Wire;

/**
 * `bin/weft fuzz`: the request fuzzer, for longer runs than CI's. Seeds are the shared request vectors;
 * with --live it starts a server on the echo application and checks every answer too. Generated responses
 * go through both response encoders (the extension's and PHP's, EncoderOracle).
 */
final class FuzzCommand
{
    /** @return array<string, array{0: string, 1: mixed, 2: string, 3?: list<string>}> */
    public static function spec(): array
    {
        return [
            'cases' => ['int', 20_000, 'how many mutated inputs'],
            'seed' => ['int', 1, 'the run (the same seed gives the same cases)'],
            'live' => ['bool', false, 'also send the cases to a live server (bin/weft serve on the echo app)'],
            'live-every' => ['int', 1, 'with --live: send every Nth case'],
            'connections-every' => ['int', 10, 'feed every Nth case to whole in-process connections on every path (PHP parser, native head parser, native connection I/O) and compare the bytes answered; 0: never'],
            'encoder-cases' => ['int', 20_000, 'how many generated responses to encode on both paths (the extension\'s encoder and PHP\'s) and compare; 0: none'],
            'help' => ['bool', false, 'show this help'],
        ];
    }

    /** @param list<string> $args */
    public function run(array $args): int
    {
        $options = Options::parse($args, self::spec());
        if ($options->get('help')) {
            echo "Usage: bin/weft fuzz [options]\n\n" . Options::help(self::spec()) . "\n";
            return 0;
        }
        if ($options->get('cases') < 1 || $options->get('live-every') < 1) {
            throw new UsageError("options '--cases' and '--live-every' must be at least 1");
        }
        if ($options->get('connections-every') < 0 || $options->get('encoder-cases') < 0) {
            throw new UsageError("options '--connections-every' and '--encoder-cases' must be 0 or more");
        }
        $root = \dirname(__DIR__, 2);
        $vectors = Fuzzer::VECTORS;
        $server = null;
        $address = null;
        if ($options->get('live')) {
            [$server, $address] = self::startServer($root);
        }
        try {
            $started = \microtime(true);
            $fuzzer = new Fuzzer(self::seeds($vectors));
            $report = $fuzzer->run(
                $options->get('seed'),
                $options->get('cases'),
                $address,
                $options->get('live-every'),
                !\stream_isatty(\STDERR) ? null : static function (int $done, int $failed): void {
                    \fwrite(\STDERR, "\r$done cases, $failed failure(s)");
                },
                $options->get('connections-every'),
            );
            $encoder = $fuzzer->runEncoder($options->get('seed'), $options->get('encoder-cases'));
            $report['failures'] = [...$report['failures'], ...$encoder['failures']];
            if ($address !== null) {
                // And the server is still serving after all that.
                $after = Wire::exchange($address, "GET /after HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
                if (($after['responses'][0]['status'] ?? 0) !== 200) {
                    $report['failures'][] = 'the server no longer answers a plain GET';
                }
            }
        } finally {
            if ($server !== null) {
                \proc_terminate($server, \SIGTERM);
                \proc_close($server);
            }
        }
        if (\stream_isatty(\STDERR)) {
            \fwrite(\STDERR, "\r");
        }
        \printf(
            "%d cases (seed %d), %d through whole connections on paths %s, %d sent to a live server, %d responses through both encoders (%d encoded in C), %.1f s; outcomes: %s\n",
            $report['cases'], $options->get('seed'), $report['connections'], \implode('+', ConnectionOracle::paths()), $report['live'],
            $encoder['cases'], $encoder['native'], \microtime(true) - $started, \json_encode($report['errors']),
        );
        foreach ($report['failures'] as $failure) {
            echo "FAIL $failure\n";
        }
        echo \count($report['failures']) === 0 ? "0 failures\n" : \count($report['failures']) . " failure(s)\n";
        return $report['failures'] === [] ? 0 : 1;
    }

    /** @return list<string> */
    public static function seeds(string $vectors): array
    {
        $seeds = [];
        foreach (require $vectors as $vector) {
            if ($vector['error'] === null && !isset($vector['limits'])) {
                $seeds[] = $vector['raw'];
            }
        }
        return $seeds;
    }

    /** @return array{resource, string} */
    private static function startServer(string $root): array
    {
        $process = \proc_open(
            [\PHP_BINARY, $root . '/bin/weft', 'serve', Fuzzer::ECHO_APP, '--port', '0', '--workers', '1', '--pid-file', \sys_get_temp_dir() . '/weft-fuzz-' . \getmypid() . '.pid'],
            [0 => ['file', '/dev/null', 'r'], 1 => ['pipe', 'w'], 2 => ['file', '/dev/null', 'a']],
            $pipes,
        );
        $line = '';
        while (!\str_starts_with($line, 'READY ') && ($line = \fgets($pipes[1])) !== false) {
        }
        if (!\is_string($line) || !\str_starts_with($line, 'READY ')) {
            throw new UsageError('the server for --live did not start');
        }
        return [$process, '127.0.0.1:' . (int) \substr($line, 6)];
    }
}
