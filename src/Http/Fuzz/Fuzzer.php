<?php

declare(strict_types=1);

namespace Weft\Http\Fuzz;

/**
 * A bounded, deterministic mutational fuzzer for the request parser and, when given one, a live server
 * running the echo application (ECHO_APP: it answers "METHOD target bodylength"). Each case must pass
 * ParserOracle, and every Nth also ConnectionOracle (whole connections: every path that serves one gives
 * the same bytes); against the server, each answer must be well-formed
 * HTTP and agree with the parser: one 200 per request it parsed (until one that ends the connection),
 * then its error status, then the end of the connection. runEncoder() checks generated responses with
 * EncoderOracle (the native and the PHP response encoder agree).
 */
final class Fuzzer
{
    /**
     * The request vectors every HTTP parser must agree with (the PHP one, the native one, a live server):
     * the fuzzer's seeds and the parsers' tests' cases. Part of the package, so `bin/weft fuzz` works in
     * an application's vendor/ too.
     */
    public const VECTORS = __DIR__ . '/vectors.php';

    /** The application `bin/weft fuzz --live` serves (and the strictness tests): it echoes what the parser understood. */
    public const ECHO_APP = __DIR__ . '/strict-app.php';

    /** @var list<string> */
    private array $failures = [];

    /** @param list<string> $seeds */
    public function __construct(
        private readonly array $seeds,
        private readonly ParserOracle $oracle = new ParserOracle(),
        private readonly ConnectionOracle $connections = new ConnectionOracle(),
    ) {
    }

    /**
     * @param null|\Closure(int, int): void $progress told (cases done, failures) now and then
     * @param int $connectionsEvery run ConnectionOracle on every Nth case (0: never); it needs a loop that is not running
     * @return array{cases: int, live: int, connections: int, failures: list<string>, errors: array<int|string, int>}
     */
    public function run(int $seed, int $cases, ?string $server = null, int $liveEvery = 1, ?\Closure $progress = null, int $connectionsEvery = 0): array
    {
        $mutator = new RequestMutator($this->seeds);
        $live = 0;
        $connections = 0;
        $errors = [];
        for ($case = 0; $case < $cases; $case++) {
            $data = $mutator->mutate($seed, $case);
            try {
                $outcome = $this->oracle->check($data, $seed + $case);
                $key = $outcome['error'] ?? ($outcome['partial'] ? 'partial' : 'ok');
                $errors[$key] = ($errors[$key] ?? 0) + 1;
                if ($connectionsEvery > 0 && $case % $connectionsEvery === 0) {
                    $this->connections->check($data, $seed + $case);
                    $connections++;
                }
                if ($server !== null && $case % $liveEvery === 0) {
                    $this->checkLive($server, $data, $outcome);
                    $live++;
                }
            } catch (FuzzFailure $e) {
                $this->failures[] = \sprintf('seed %d case %d: %s; input %s', $seed, $case, $e->getMessage(), \json_encode(\substr($data, 0, 300), \JSON_INVALID_UTF8_SUBSTITUTE));
            }
            if ($progress !== null && ($case + 1) % 500 === 0) {
                $progress($case + 1, \count($this->failures));
            }
        }
        \ksort($errors);
        return ['cases' => $cases, 'live' => $live, 'connections' => $connections, 'failures' => $this->failures, 'errors' => $errors];
    }

    /**
     * Generated responses through both encoder paths (EncoderOracle::generate(), the same for the same seed).
     *
     * @return array{cases: int, native: int, failures: list<string>} native: the cases the C path encoded
     */
    public function runEncoder(int $seed, int $cases, EncoderOracle $oracle = new EncoderOracle()): array
    {
        $native = 0;
        $failures = [];
        for ($case = 0; $case < $cases; $case++) {
            [$response, $version, $keepAlive, $isHead, $date, $server] = EncoderOracle::generate($seed, $case);
            try {
                $native += $oracle->check($response, $version, $keepAlive, $isHead, $date, $server) ? 1 : 0;
            } catch (FuzzFailure $e) {
                $failures[] = \sprintf('encoder seed %d case %d: %s', $seed, $case, $e->getMessage());
            }
        }
        return ['cases' => $cases, 'native' => $native, 'failures' => $failures];
    }

    /** @param array{requests: list<string>, error: ?int, partial: ?bool, close: ?int} $outcome */
    private function checkLive(string $server, string $data, array $outcome): void
    {
        $expected = $outcome['requests'];
        $error = $outcome['error'];
        if ($outcome['close'] !== null) {
            $expected = \array_slice($expected, 0, $outcome['close'] + 1);
            $error = null; // the server stops reading after that request
        }
        $methods = \array_map(static fn (string $r) => \substr($r, 0, (int) \strpos($r, ' ')), $expected);
        try {
            $result = Wire::exchange($server, $data, $methods, 10.0);
        } catch (\RuntimeException $e) {
            throw new FuzzFailure('the server did not answer: ' . $e->getMessage());
        }
        if ($result['malformed'] !== null) {
            throw new FuzzFailure('malformed response: ' . $result['malformed']);
        }
        if (!$result['closed']) {
            throw new FuzzFailure('the server did not end the connection');
        }
        $want = [];
        foreach ($expected as $i => $line) {
            $want[] = $methods[$i] === 'HEAD' ? '200' : '200 ' . $line;
        }
        if ($error !== null) {
            $want[] = (string) $error;
        }
        $got = [];
        foreach ($result['responses'] as $i => $response) {
            $got[] = $response['status'] === 200 && ($methods[$i] ?? '') !== 'HEAD' ? '200 ' . $response['body'] : (string) $response['status'];
        }
        if ($got !== $want) {
            throw new FuzzFailure('server and parser disagree: server ' . \json_encode($got) . ', parser ' . \json_encode($want));
        }
    }
}
