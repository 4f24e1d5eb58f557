<?php

declare(strict_types=1);

namespace Weft\Tests\Unit\Socket;

use Weft\Socket\Acceptor;
use Weft\Socket\Listener;
use Weft\Socket\Socket;
use Weft\Tests\Unit\Coroutine\CoroutineTestCase;

use function Weft\run;
use function Weft\sleep;

final class AcceptorTest extends CoroutineTestCase
{
    public function testEachConnectionRunsInItsOwnCoroutineAndIsClosedWhenItsHandlerReturns(): void
    {
        $replies = run(static function (): array {
            $listener = Listener::listen('127.0.0.1:0');
            $acceptor = Acceptor::start($listener, static function (Socket $client): void {
                $line = $client->readLine();
                sleep(0.05); // the others are served meanwhile
                $client->write("echo $line\n");
            });
            $clients = [];
            for ($i = 0; $i < 3; $i++) {
                $clients[$i] = Socket::connect($listener->address());
                $clients[$i]->write("$i\n");
            }
            $replies = [];
            foreach ($clients as $i => $client) {
                $replies[$i] = [$client->readLine(), $client->readLine()]; // the reply, then the end: closed by the acceptor
            }
            $listener->close();
            $acceptor->join(); // closing the listener ends the loop
            return $replies;
        });
        self::assertSame([['echo 0', null], ['echo 1', null], ['echo 2', null]], $replies);
    }

    public function testBeyondTheCapANewConnectionIsClosedUnanswered(): void
    {
        [$first, $second, $third] = run(static function (): array {
            $listener = Listener::listen('127.0.0.1:0');
            Acceptor::start($listener, static function (Socket $client): void {
                $client->write("hello\n");
                $client->readLine(); // held until the client speaks
            }, 1);
            $held = Socket::connect($listener->address());
            $first = $held->readLine();
            $refused = Socket::connect($listener->address());
            $second = $refused->readLine();
            $held->write("bye\n");
            $held->readLine();
            $again = Socket::connect($listener->address());
            $third = $again->readLine(); // a place is free again
            $again->close();
            $listener->close();
            return [$first, $second, $third];
        });
        self::assertSame('hello', $first);
        self::assertNull($second, 'closed at once, no greeting');
        self::assertSame('hello', $third);
    }
}
