<?php
// What starting and finishing one request's coroutine costs, alone: Dispatcher::dispatch() of a session
// whose serve() does nothing, N times from {main} (the loop is not run: each call runs at once to its end).
// Count instructions with callgrind and take the difference of two runs (start-up cancels):
//
//   ir() { valgrind --tool=callgrind --callgrind-out-file=/dev/null --smc-check=all php -d opcache.enable_cli=1 \
//     -d opcache.jit=tracing -d opcache.jit_buffer_size=64M -d extension=ext/modules/weft.so \
//     scripts/dispatch-ir.php [CHECKOUT] epoll $1 2>&1 | grep -o 'Collected : [0-9]*' | grep -o '[0-9]*'; }
//   echo $(( ($(ir 60000) - $(ir 20000)) / 40000 ))
//
// CHECKOUT (default: this one) is the source tree to load Weft from, as in scripts/inproc-http.php.
declare(strict_types=1);

$root = (require __DIR__ . '/checkout.php')($argv[1] ?? null);

$driver = Weft\Loop\Loop::reset($argv[2] ?? 'epoll');
$session = new class () implements Weft\Server\Session {
    public int $served = 0;

    public function received(string $bytes): void
    {
    }

    public function ended(): void
    {
    }

    public function phase(): int
    {
        return self::IDLE;
    }

    public function wantsInput(): bool
    {
        return true;
    }

    public function timedOut(): ?string
    {
        return null;
    }

    public function resume(): void
    {
    }

    public function closed(): void
    {
    }

    public function serve(mixed $request): void
    {
        $this->served++;
    }

    public function describe(mixed $request): string
    {
        return 'GET /';
    }
};
$dispatcher = new Weft\Server\Dispatcher($driver, new Psr\Log\NullLogger());
$count = (int) ($argv[3] ?? 100000);
$request = new stdClass();
for ($i = 0; $i < $count; $i++) {
    $dispatcher->dispatch($session, $request);
}
echo $session->served === $count ? "$count dispatched\n" : "only {$session->served} of $count served\n";
