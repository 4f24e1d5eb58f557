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
        // Each read its own values back, whichever finished first (under valgrind the 10 ms steps blur).
        \ksort($seen);
        self::assertSame(['a' => ['a', 'a!'], 'b' => ['b', 'b!'], 'c' => ['c', 'c!']], $seen);
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

    public function testValuesFollowedTogetherAreSwitchedByTheirGroupUntilOneOfThemIsFollowedAgain(): void
    {
        $reads = 0;
        ProcessState::followTogether(
            [FollowedFixture::class . '::$public', FollowedFixture::class . '::$hidden'],
            static function (array &$values) use (&$reads): void {
                $reads++;
                $values[FollowedFixture::class . '::$public'] = FollowedFixture::$public;
                $values[FollowedFixture::class . '::$hidden'] = FollowedFixture::hidden();
            },
            static function (array $values): void {
                if (\array_key_exists(FollowedFixture::class . '::$public', $values)) {
                    FollowedFixture::$public = $values[FollowedFixture::class . '::$public'];
                    FollowedFixture::setHidden((string) $values[FollowedFixture::class . '::$hidden']);
                }
            },
        );
        $interleaved = static fn (): array => run(static function (): array {
            $seen = [];
            $wg = new \Weft\Coroutine\WaitGroup();
            foreach (['a', 'b'] as $who) {
                $wg->add();
                go(static function () use ($who, &$seen, $wg): void {
                    Scheduler::get()->bind(StateSet::capture());
                    FollowedFixture::$public = $who;
                    FollowedFixture::setHidden($who . '!');
                    sleep(0.01);
                    $seen[$who] = [FollowedFixture::$public, FollowedFixture::hidden()];
                    $wg->done();
                });
            }
            $wg->wait();
            return $seen;
        });
        self::assertSame(['a' => ['a', 'a!'], 'b' => ['b', 'b!']], $interleaved());
        self::assertGreaterThan(0, $reads, 'the group read the values');

        // Followed again on its own: the group ends, and both still follow (each through its closures).
        $reads = 0;
        ProcessState::followStatic(FollowedFixture::class, 'public');
        self::assertSame(['a' => ['a', 'a!'], 'b' => ['b', 'b!']], $interleaved());
        self::assertSame(0, $reads);
    }

    public function testOnlyFollowedValuesCanBeGrouped(): void
    {
        $this->expectException(\InvalidArgumentException::class);
        ProcessState::followTogether(['nothing'], static function (array &$values): void {
        }, static function (array $values): void {
        });
    }

    public function testTheExtensionReadsAndWritesStaticPropertiesOfAnyVisibility(): void
    {
        if (!class_exists(\Weft\Ext\StaticProperties::class)) {
            self::markTestSkipped('the weft extension is not loaded');
        }
        $classes = [strtolower(StaticFixture::class) => ['p' => 'public', 'h' => 'hidden', 'i' => 'int', 'u' => 'unset', 'n' => 'nothing', 'x' => 'instance']];
        $properties = new \Weft\Ext\StaticProperties($classes + ['no\\such\\class' => ['a' => 'b']]);
        // Resolved once: the missing property, the instance property and the class not loaded are left out.
        self::assertSame(4, $properties->count());
        $values = ['kept' => 1];
        $properties->read($values);
        // An uninitialized typed property, a missing one and an instance property are left out.
        self::assertSame(['kept' => 1, 'p' => 'boot', 'h' => null, 'i' => 1], $values);

        $object = new \stdClass();
        $properties->write(['p' => 'set', 'h' => $object, 'i' => 2]);
        self::assertSame('set', StaticFixture::$public);
        self::assertSame($object, StaticFixture::hidden());
        self::assertSame(2, StaticFixture::$int);
        // What $values lacks is left alone.
        $properties->write(['p' => 'again']);
        self::assertSame('again', StaticFixture::$public);
        self::assertSame($object, StaticFixture::hidden());

        // A static property bound by reference is written through the reference, type checks included.
        $reference = &StaticFixture::reference();
        $properties->write(['i' => 3]);
        self::assertSame(3, $reference);
        try {
            $properties->write(['i' => 'not an int']);
            self::fail('a value of the wrong type was written');
        } catch (\TypeError $e) {
            self::assertStringContainsString('int', $e->getMessage());
        }
        self::assertSame(3, StaticFixture::$int);
        unset($reference);

        // A typed property uninitialized when resolved is read once something has set it.
        $properties->write(['u' => 'now set']);
        $values = [];
        $properties->read($values);
        self::assertSame('now set', $values['u']);
        StaticFixture::reset();
    }

    public function testTheExtensionSnapshotsAndRestoresByPosition(): void
    {
        if (!class_exists(\Weft\Ext\StaticProperties::class)) {
            self::markTestSkipped('the weft extension is not loaded');
        }
        $properties = new \Weft\Ext\StaticProperties([
            strtolower(StaticFixture::class) => ['p' => 'public', 'h' => 'hidden', 'i' => 'int'],
            strtolower(UninitializedFixture::class) => ['n' => 'never'],
        ]);
        self::assertSame(['p', 'h', 'i', 'n'], $properties->keys());
        try {
            // Uninitialized: no index 3.
            $boot = $properties->snapshot();
            self::assertSame([0 => 'boot', 1 => null, 2 => 1], $boot);
            $object = new \stdClass();
            $properties->write(['p' => 'other', 'h' => $object, 'i' => 5]);
            $other = $properties->snapshot();
            self::assertSame(['other', $object, 5], $other);
            self::assertTrue(array_is_list($other));
            // Given the last list, the same list while nothing changed; a fresh one once something did.
            self::assertSame($other, $properties->snapshot($other));
            self::assertSame($other, $properties->snapshot(['other', $object]));
            self::assertSame($other, $properties->snapshot($boot));
            StaticFixture::$int = 6;
            self::assertSame(['other', $object, 6], $properties->snapshot($other));
            StaticFixture::$int = 5;
            $properties->restore($boot);
            self::assertSame('boot', StaticFixture::$public);
            self::assertNull(StaticFixture::hidden());
            self::assertSame(1, StaticFixture::$int);
            $properties->restore($other);
            self::assertSame($object, StaticFixture::hidden());
            self::assertSame(5, StaticFixture::$int);
            // Types are checked as write() checks them.
            try {
                $properties->restore([2 => 'not an int']);
                self::fail('a value of the wrong type was restored');
            } catch (\TypeError $e) {
                self::assertStringContainsString('int', $e->getMessage());
            }
            self::assertSame(5, StaticFixture::$int);
        } finally {
            StaticFixture::reset();
        }
    }

    public function testASwitchKeepsEachSetsValuesWhenTheFollowedSetGrowsInBetween(): void
    {
        // With the extension, a set keeps its static properties as the plan's list; a value followed
        // after it was saved (a further instance's boot) rebuilds the plan, and the older list must still
        // be installed by name.
        ProcessState::followStatic(StaticFixture::class, 'int');
        try {
            StaticFixture::$int = 10;
            StaticFixture::$public = 'a';
            $a = StateSet::capture();
            StaticFixture::$int = 20;
            $b = StateSet::capture();
            Scheduler::get()->bind($b);
            ProcessState::followStatic(StaticFixture::class, 'public');
            $b->put(StaticFixture::class . '::$public', 'b');
            StaticFixture::$public = 'b';
            Scheduler::get()->bind($a);
            self::assertSame(10, StaticFixture::$int);
            // $a was saved before $public was followed: left as it is.
            self::assertSame('b', StaticFixture::$public);
            StaticFixture::$public = 'a again';
            Scheduler::get()->bind($b);
            self::assertSame(20, StaticFixture::$int);
            self::assertSame('b', StaticFixture::$public);
            Scheduler::get()->bind($a);
            self::assertSame(10, StaticFixture::$int);
            self::assertSame('a again', StaticFixture::$public);
            self::assertSame(20, $b->get(StaticFixture::class . '::$int'));
        } finally {
            Scheduler::get()->bind(null);
            ProcessState::forget(StaticFixture::class . '::$int');
            ProcessState::forget(StaticFixture::class . '::$public');
            StaticFixture::reset();
        }
    }

    public function testTheSwitchIsTheSameWithAndWithoutTheExtension(): void
    {
        // Plain static properties go through the extension when it is loaded (ProcessState::plan()),
        // through a closure per class otherwise: the test above runs both ways in CI (with and without -d extension).
        ProcessState::followStatic(StaticFixture::class, 'int');
        try {
            StaticFixture::$int = 10;
            $set = StateSet::capture();
            StaticFixture::$int = 20;
            $other = StateSet::capture();
            $set->install($other);
            self::assertSame(10, StaticFixture::$int);
            $other->install($set);
            self::assertSame(20, StaticFixture::$int);
        } finally {
            ProcessState::forget(StaticFixture::class . '::$int');
            StaticFixture::reset();
        }
    }
}

final class UninitializedFixture
{
    /** Never written by any test. */
    public static string $never;
}

final class StaticFixture
{
    public static string $public = 'boot';
    public static int $int = 1;
    private static mixed $hidden = null;
    /** Never written: stays uninitialized. */
    private static string $unset;
    public string $instance = '';

    public static function hidden(): mixed
    {
        return self::$hidden;
    }

    public static function &reference(): int
    {
        return self::$int;
    }

    public static function reset(): void
    {
        self::$public = 'boot';
        self::$int = 1;
        self::$hidden = null;
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
