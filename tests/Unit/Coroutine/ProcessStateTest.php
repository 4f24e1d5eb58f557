<?php

declare(strict_types=1);

namespace Weft\Tests\Unit\Coroutine;

use Weft\Coroutine\Channel;
use Weft\Coroutine\ProcessState;
use Weft\Coroutine\Scheduler;
use Weft\Coroutine\StateSet;

use function Weft\go;
use function Weft\run;
use function Weft\sleep;

final class ProcessStateTest extends CoroutineTestCase
{
    protected function setUp(): void
    {
        parent::setUp();
        FollowedFixture::$public = 'boot';
        FollowedFixture::reset();
        ProcessState::followStatic(FollowedFixture::class, 'public');
        ProcessState::followStatic(FollowedFixture::class, 'hidden');
    }

    protected function tearDown(): void
    {
        foreach (ProcessState::names() as $name) {
            if (str_starts_with($name, FollowedFixture::class)) {
                ProcessState::forget($name);
            }
        }
        parent::tearDown();
    }

    public function testEachBoundCoroutineSeesItsOwnValuesAcrossWaits(): void
    {
        $seen = run(static function (): array {
            $seen = [];
            $done = new Channel(3);
            foreach (['a', 'b', 'c'] as $i => $who) {
                go(static function () use ($who, $i, &$seen, $done): void {
                    Scheduler::get()->bind(StateSet::capture());
                    FollowedFixture::$public = $who;
                    FollowedFixture::setHidden($who . '!');
                    // Interleave: each wakes after the others have written theirs.
                    sleep(0.01 * (3 - $i));
                    $seen[$who] = [FollowedFixture::$public, FollowedFixture::hidden()];
                    $done->send(true);
                });
            }
            for ($n = 0; $n < 3; $n++) {
                $done->receive();
            }
            return $seen;
        });
        self::assertSame(['c' => ['c', 'c!'], 'b' => ['b', 'b!'], 'a' => ['a', 'a!']], $seen);
    }

    public function testWithoutFollowingTheLastWriterWins(): void
    {
        ProcessState::forget(FollowedFixture::class . '::$public');
        $seen = run(static function (): array {
            $seen = [];
            $wg = new \Weft\Coroutine\WaitGroup();
            foreach (['a', 'b'] as $who) {
                $wg->add();
                go(static function () use ($who, &$seen, $wg): void {
                    Scheduler::get()->bind(StateSet::capture());
                    FollowedFixture::$public = $who;
                    sleep(0.01);
                    $seen[$who] = FollowedFixture::$public;
                    $wg->done();
                });
            }
            $wg->wait();
            return $seen;
        });
        self::assertSame(['a' => 'b', 'b' => 'b'], $seen, 'the check above must be able to fail');
    }

    public function testChildrenInheritTheSetAndTheParentGetsItsOwnBackAfterAChildBindsAnother(): void
    {
        $seen = run(static function (): array {
            Scheduler::get()->bind(StateSet::capture());
            FollowedFixture::$public = 'parent';
            $seen = [];
            $child = go(static function () use (&$seen): void {
                $seen['inherited'] = FollowedFixture::$public;
                sleep(0.001);
                $seen['inherited after a wait'] = FollowedFixture::$public;
            });
            go(static function (): void {
                Scheduler::get()->bind(StateSet::capture());
                FollowedFixture::$public = 'other';
                sleep(0.001);
            });
            $seen['parent'] = FollowedFixture::$public;
            $child->join();
            return $seen;
        });
        self::assertSame(['inherited' => 'parent', 'parent' => 'parent', 'inherited after a wait' => 'parent'], $seen);
    }

    public function testUnboundCoroutinesChangeNothingAndACopyIsIndependent(): void
    {
        $pristine = StateSet::capture();
        $copy = $pristine->copy();
        FollowedFixture::$public = 'changed';
        $copy->install();
        self::assertSame('boot', FollowedFixture::$public);
        FollowedFixture::$public = 'again';
        $copy->save();
        self::assertSame('boot', $pristine->get(FollowedFixture::class . '::$public'));
        self::assertSame('again', $copy->get(FollowedFixture::class . '::$public'));

        run(static function (): void {
            go(static fn () => sleep(0.001));
        });
        self::assertSame('again', FollowedFixture::$public);
    }

    public function testFollowingSomethingThatIsNotThereIsSkipped(): void
    {
        self::assertFalse(ProcessState::followStatic('No\\Such\\Class', 'x'));
        self::assertFalse(ProcessState::followStatic(FollowedFixture::class, 'nothing'));
        $this->expectException(\InvalidArgumentException::class);
        ProcessState::followStatic(FollowedFixture::class, 'instance');
    }

    public function testAnUninitializedTypedStaticStaysUntouched(): void
    {
        self::assertTrue(ProcessState::followStatic(FollowedFixture::class, 'typed'));
        $set = StateSet::capture();
        self::assertNull($set->get(FollowedFixture::class . '::$typed'));
        $set->install();
        self::assertFalse((new \ReflectionProperty(FollowedFixture::class, 'typed'))->isInitialized());
    }
}

final class FollowedFixture
{
    public static string $public = 'boot';
    private static ?string $hidden = null;
    protected static array $typed;
    public string $instance = '';

    public static function reset(): void
    {
        self::$hidden = null;
    }

    public static function setHidden(string $value): void
    {
        self::$hidden = $value;
    }

    public static function hidden(): ?string
    {
        return self::$hidden;
    }
}
