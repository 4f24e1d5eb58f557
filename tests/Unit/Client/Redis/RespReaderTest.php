<?php

declare(strict_types=1);

namespace Weft\Tests\Unit\Client\Redis;

use PHPUnit\Framework\Attributes\DataProvider;
use PHPUnit\Framework\TestCase;
use Weft\Client\Redis\Protocol\ProtocolError;
use Weft\Client\Redis\Protocol\Push;
use Weft\Client\Redis\Protocol\RespReader;
use Weft\Client\Redis\RedisError;

/** The decoder on byte vectors from the RESP2 and RESP3 specifications. */
final class RespReaderTest extends TestCase
{
    /** @return iterable<string, array{string, mixed}> */
    public static function replies(): iterable
    {
        yield 'simple string' => ["+OK\r\n", 'OK'];
        yield 'empty simple string' => ["+\r\n", ''];
        yield 'integer' => [":1234\r\n", 1234];
        yield 'negative integer' => [":-42\r\n", -42];
        yield 'int64 max' => [":9223372036854775807\r\n", \PHP_INT_MAX];
        yield 'blob string' => ["\$11\r\nhello world\r\n", 'hello world'];
        yield 'empty blob' => ["\$0\r\n\r\n", ''];
        yield 'binary blob with CRLF inside' => ["\$6\r\na\r\nb\0c\r\n", "a\r\nb\0c"];
        yield 'RESP2 null bulk' => ["\$-1\r\n", null];
        yield 'RESP2 null array' => ["*-1\r\n", null];
        yield 'RESP3 null' => ["_\r\n", null];
        yield 'empty array' => ["*0\r\n", []];
        yield 'array' => ["*3\r\n:1\r\n:2\r\n:3\r\n", [1, 2, 3]];
        yield 'nested array' => ["*2\r\n*3\r\n:1\r\n\$5\r\nhello\r\n:2\r\n#f\r\n", [[1, 'hello', 2], false]];
        yield 'array with nulls' => ["*3\r\n\$1\r\na\r\n\$-1\r\n_\r\n", ['a', null, null]];
        yield 'boolean true' => ["#t\r\n", true];
        yield 'boolean false' => ["#f\r\n", false];
        yield 'double' => [",1.23\r\n", 1.23];
        yield 'double without fraction' => [",10\r\n", 10.0];
        yield 'double exponent' => [",1.5e3\r\n", 1500.0];
        yield 'double inf' => [",inf\r\n", \INF];
        yield 'double -inf' => [",-inf\r\n", -\INF];
        yield 'big number' => ["(3492890328409238509324850943850943825024385\r\n", '3492890328409238509324850943850943825024385'];
        yield 'verbatim' => ["=15\r\ntxt:Some string\r\n", 'Some string'];
        yield 'map' => ["%2\r\n+first\r\n:1\r\n+second\r\n:2\r\n", ['first' => 1, 'second' => 2]];
        yield 'empty map' => ["%0\r\n", []];
        yield 'map with integer keys' => ["%2\r\n:1\r\n+a\r\n:2\r\n+b\r\n", [1 => 'a', 2 => 'b']];
        yield 'map of sets' => ["%1\r\n+s\r\n~2\r\n+x\r\n+y\r\n", ['s' => ['x', 'y']]];
        yield 'set' => ["~5\r\n+orange\r\n+apple\r\n#t\r\n:100\r\n:999\r\n", ['orange', 'apple', true, 100, 999]];
        yield 'streamed string' => ["\$?\r\n;4\r\nHell\r\n;6\r\no worl\r\n;1\r\nd\r\n;0\r\n", 'Hello world'];
        yield 'streamed array' => ["*?\r\n:1\r\n:2\r\n:3\r\n.\r\n", [1, 2, 3]];
        yield 'streamed map' => ["%?\r\n+a\r\n:1\r\n+b\r\n:2\r\n.\r\n", ['a' => 1, 'b' => 2]];
        yield 'streamed set inside array' => ["*2\r\n~?\r\n+x\r\n.\r\n:7\r\n", [['x'], 7]];
    }

    #[DataProvider('replies')]
    public function testDecodesInOneFeed(string $bytes, mixed $expected): void
    {
        $reader = new RespReader();
        $reader->feed($bytes);
        self::assertTrue($reader->next($value));
        self::assertSame($expected, $value);
        self::assertSame(0, $reader->buffered());
        self::assertFalse($reader->next($value), 'nothing more');
    }

    #[DataProvider('replies')]
    public function testDecodesWhenSplitAtEveryByte(string $bytes, mixed $expected): void
    {
        for ($cut = 1; $cut < \strlen($bytes); $cut++) {
            $reader = new RespReader();
            $reader->feed(\substr($bytes, 0, $cut));
            self::assertFalse($reader->next($value), "incomplete at $cut");
            $reader->feed(\substr($bytes, $cut));
            self::assertTrue($reader->next($value), "complete after the cut at $cut");
            self::assertSame($expected, $value, "cut at $cut");
        }
        // And one byte at a time.
        $reader = new RespReader();
        $done = false;
        foreach (\str_split($bytes) as $i => $byte) {
            $reader->feed($byte);
            $done = $reader->next($value);
            self::assertSame($i === \strlen($bytes) - 1, $done);
        }
        self::assertSame($expected, $value);
    }

    public function testNanDoubles(): void
    {
        foreach ([",nan\r\n", ",-nan\r\n", ",NAN\r\n"] as $bytes) {
            $reader = new RespReader();
            $reader->feed($bytes);
            self::assertTrue($reader->next($value));
            self::assertNan($value);
        }
    }

    public function testErrorsAreReturnedAsRedisErrorsWithTheirPrefix(): void
    {
        $reader = new RespReader();
        $reader->feed("-WRONGTYPE Operation against a key holding the wrong kind of value\r\n!21\r\nSYNTAX invalid syntax\r\n-some lower case error\r\n");
        self::assertTrue($reader->next($a));
        self::assertInstanceOf(RedisError::class, $a);
        self::assertSame('WRONGTYPE', $a->prefix);
        self::assertSame('WRONGTYPE Operation against a key holding the wrong kind of value', $a->getMessage());
        self::assertTrue($reader->next($b));
        self::assertSame('SYNTAX', $b->prefix());
        self::assertSame('SYNTAX invalid syntax', $b->getMessage());
        self::assertTrue($reader->next($c));
        self::assertSame('ERR', $c->prefix);
    }

    public function testErrorsInsideArraysStayInPlace(): void
    {
        $reader = new RespReader();
        $reader->feed("*3\r\n+OK\r\n-ERR value is not an integer or out of range\r\n:1\r\n");
        self::assertTrue($reader->next($value));
        self::assertSame('OK', $value[0]);
        self::assertInstanceOf(RedisError::class, $value[1]);
        self::assertSame(1, $value[2]);
    }

    public function testTopLevelPushesBecomePushObjects(): void
    {
        $reader = new RespReader();
        $reader->feed(">3\r\n\$7\r\nmessage\r\n\$2\r\nch\r\n\$5\r\nhello\r\n\$9\r\nGet-Reply\r\n");
        self::assertTrue($reader->next($push));
        self::assertInstanceOf(Push::class, $push);
        self::assertSame('message', $push->kind);
        self::assertSame(['ch', 'hello'], $push->data);
        self::assertTrue($reader->next($reply));
        self::assertSame('Get-Reply', $reply);
    }

    public function testAttributesAreSetAsideAndTheReplyFollows(): void
    {
        $reader = new RespReader();
        $reader->feed("|1\r\n+key-popularity\r\n%2\r\n\$1\r\na\r\n,0.1923\r\n\$1\r\nb\r\n,0.0012\r\n*2\r\n:2039123\r\n:9543892\r\n");
        self::assertTrue($reader->next($value));
        self::assertSame([2039123, 9543892], $value);
        self::assertSame(['key-popularity' => ['a' => 0.1923, 'b' => 0.0012]], $reader->takeAttributes());
        self::assertSame([], $reader->takeAttributes());

        // Inside an aggregate, an attribute informs the element after it and is not an element itself.
        $reader->feed("*3\r\n:1\r\n:2\r\n|1\r\n+ttl\r\n:3600\r\n:3\r\n");
        self::assertTrue($reader->next($value));
        self::assertSame([1, 2, 3], $value);
        self::assertSame(['ttl' => 3600], $reader->takeAttributes());
    }

    public function testSeveralRepliesInOneFeedComeOutInOrder(): void
    {
        $reader = new RespReader();
        $reader->feed("+OK\r\n:1\r\n\$3\r\nfoo\r\n*1\r\n_\r\n");
        $out = [];
        while ($reader->next($value)) {
            $out[] = $value;
        }
        self::assertSame(['OK', 1, 'foo', [null]], $out);
    }

    public function testALargeArrayFedInPiecesIsParsedOnce(): void
    {
        $n = 20000;
        $bytes = "*$n\r\n" . \str_repeat("\$5\r\nvalue\r\n", $n);
        $reader = new RespReader();
        $chunks = \str_split($bytes, 4096);
        $last = \array_pop($chunks);
        foreach ($chunks as $chunk) {
            $reader->feed($chunk);
            self::assertFalse($reader->next($value));
        }
        $reader->feed($last);
        self::assertTrue($reader->next($value));
        self::assertCount($n, $value);
        self::assertSame('value', $value[$n - 1]);
    }

    public function testALargeBlob(): void
    {
        $blob = \random_bytes(300000);
        $reader = new RespReader();
        foreach (\str_split('$' . \strlen($blob) . "\r\n" . $blob . "\r\n", 65536) as $chunk) {
            $reader->feed($chunk);
        }
        self::assertTrue($reader->next($value));
        self::assertSame($blob, $value);
    }

    public function testGarbageIsAProtocolError(): void
    {
        $reader = new RespReader();
        $reader->feed("HTTP/1.1 400 Bad Request\r\n");
        $this->expectException(ProtocolError::class);
        $reader->next($value);
    }

    public function testResetForgetsPartialState(): void
    {
        $reader = new RespReader();
        $reader->feed("*2\r\n:1\r\n");
        self::assertFalse($reader->next($value));
        self::assertTrue($reader->isMidReply());
        $reader->reset();
        self::assertFalse($reader->isMidReply());
        $reader->feed(":5\r\n");
        self::assertTrue($reader->next($value));
        self::assertSame(5, $value);
    }
}
