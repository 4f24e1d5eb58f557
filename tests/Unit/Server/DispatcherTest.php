<?php

declare(strict_types=1);

namespace Weft\Tests\Unit\Server;

use PHPUnit\Framework\TestCase;
use Psr\Log\NullLogger;
use Weft\Loop\Driver;
use Weft\Loop\Loop;
use Weft\Server\Dispatcher;
use Weft\Server\Scoreboard;
use Weft\Tests\Support\QuietSession;

/**
 * A request's one way in and out: dispatch() says whether the call was answered before it returned;
 * when it was not, the session hears of the answer once, through resume(), and never while one of its
 * own dispatch() or serve() calls is still running.
 */
final class DispatcherTest extends TestCase
{
    private Driver $driver;

    protected function setUp(): void
    {
        $this->driver = Loop::reset('select');
    }

    protected function tearDown(): void
    {
        Loop::reset('select');
    }

    public function testACallAnsweredAtOnceIsReportedByDispatchAlone(): void
    {
        $dispatcher = new Dispatcher($this->driver, new NullLogger());
        $session = new DispatcherTestSession();
        self::assertTrue($dispatcher->dispatch($session, 'now'));
        self::assertSame(['serve now', 'served now'], $session->events);
        $this->driver->run();
        self::assertSame(['serve now', 'served now'], $session->events, 'no resume() for it');
        self::assertSame(1, $dispatcher->calls());
    }

    public function testACallThatWaitsIsReportedOnceThroughResume(): void
    {
        $dispatcher = new Dispatcher($this->driver, new NullLogger());
        $session = new DispatcherTestSession();
        self::assertFalse($dispatcher->dispatch($session, 'wait'));
        self::assertSame(['serve wait'], $session->events);
        $this->driver->run();
        self::assertSame(['serve wait', 'served wait', 'resume'], $session->events);
        self::assertSame([], $session->reentered);
    }

    public function testInSyncModeAQueuedCallIsReportedThroughResumeWhetherItWaitsOrNot(): void
    {
        $dispatcher = new Dispatcher($this->driver, new NullLogger(), 1);
        $first = new DispatcherTestSession();
        $second = new DispatcherTestSession();
        $third = new DispatcherTestSession();
        self::assertFalse($dispatcher->dispatch($first, 'wait'));
        self::assertFalse($dispatcher->dispatch($second, 'now'), 'queued behind the first: it waits');
        self::assertFalse($dispatcher->dispatch($third, 'wait'));
        self::assertSame([], $second->events);
        $this->driver->run();
        self::assertSame(['serve wait', 'served wait', 'resume'], $first->events);
        self::assertSame(['serve now', 'served now', 'resume'], $second->events, 'answered at once when its turn came, yet its dispatch() had said false');
        self::assertSame(['serve wait', 'served wait', 'resume'], $third->events);
        self::assertSame([], $first->reentered + $second->reentered + $third->reentered);
        self::assertSame(3, $dispatcher->calls());
    }

    /** The worker's scoreboard slot is handed to the Dispatcher, which names there the call that runs. */
    public function testTheScoreboardItIsHandedNamesTheCallInFlightUntilItEnds(): void
    {
        $scoreboard = Scoreboard::create();
        if ($scoreboard === null) {
            self::markTestSkipped('no shmop extension');
        }
        $dispatcher = new Dispatcher($this->driver, new NullLogger(), 0, 0.0, $scoreboard);
        $session = new DispatcherTestSession();
        self::assertFalse($dispatcher->dispatch($session, 'wait'));
        self::assertSame('wait', $scoreboard->current());
        $this->driver->run();
        self::assertNull($scoreboard->current());
    }

    public function testASessionDispatchingItsNextRequestFromResumeIsNeverReentered(): void
    {
        $dispatcher = new Dispatcher($this->driver, new NullLogger());
        $session = new DispatcherTestSession();
        // A pipelined batch: each resume() dispatches the next request, as HttpSession::pump() does.
        $session->next = ['now', 'wait', 'now', 'wait'];
        $session->dispatcher = $dispatcher;
        self::assertFalse($dispatcher->dispatch($session, 'wait'));
        $this->driver->run();
        self::assertSame([], $session->reentered);
        self::assertSame(5, $dispatcher->calls());
        self::assertSame(['serve wait', 'served wait', 'resume', 'serve now', 'served now', 'serve wait', 'served wait', 'resume', 'serve now', 'served now', 'serve wait', 'served wait', 'resume'], $session->events);
    }

    public function testACallThatHasEndedIsNotInFlightWhileItsSessionGoesOnWithTheNext(): void
    {
        $dispatcher = new Dispatcher($this->driver, new NullLogger());
        $session = new DispatcherTestSession();
        // 'look' runs from resume(), on the coroutine of the ended 'wait': the calls in flight (what
        // status and a fatal error's answers read) are 'look' alone.
        $session->next = ['look'];
        $session->dispatcher = $dispatcher;
        self::assertFalse($dispatcher->dispatch($session, 'wait'));
        self::assertSame(['wait'], \array_column($dispatcher->running(), 'request'));
        $this->driver->run();
        self::assertSame([['look'], 'look'], $session->seen);
        self::assertSame([], $dispatcher->running());
        self::assertSame(2, $dispatcher->calls());
    }
}

/** @internal */
final class DispatcherTestSession extends QuietSession
{
    /** @var list<string> */
    public array $events = [];
    /** @var list<string> calls that arrived while one of this session's own calls was still running */
    public array $reentered = [];
    /** @var list<string> requests to dispatch from resume() */
    public array $next = [];
    public ?Dispatcher $dispatcher = null;
    /** @var array{list<string>, ?string}|null what a 'look' request saw: the calls in flight, the current one */
    public ?array $seen = null;
    private bool $serving = false;
    private bool $resuming = false;

    public function serve(mixed $request): void
    {
        if ($this->serving) {
            $this->reentered[] = 'serve';
        }
        $this->serving = true;
        $this->events[] = "serve $request";
        if ($request === 'look') {
            $this->seen = [\array_column($this->dispatcher->running(), 'request'), $this->dispatcher->currentRequest()];
        }
        if ($request === 'wait') {
            \Weft\sleep(0.001);
        }
        $this->events[] = "served $request";
        $this->serving = false;
    }

    public function resume(): void
    {
        if ($this->serving || $this->resuming) {
            $this->reentered[] = 'resume';
        }
        $this->resuming = true;
        $this->events[] = 'resume';
        // Like pump(): dispatch until one waits.
        while ($this->next !== [] && $this->dispatcher->dispatch($this, \array_shift($this->next))) {
        }
        $this->resuming = false;
    }

    public function describe(mixed $request): string
    {
        return (string) $request;
    }
}
