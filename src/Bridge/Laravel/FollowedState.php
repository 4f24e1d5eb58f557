<?php

declare(strict_types=1);

namespace Weft\Bridge\Laravel;

use Weft\Coroutine\ProcessState;

/**
 * What Laravel keeps process-wide that belongs to one application instance or one request, and so
 * must follow the coroutine when a worker serves several requests at once through several
 * instances. Read from laravel/framework 11 and 12's own source; each entry says why it is here.
 * Besides these, every static property an instance's boot writes follows its instance too
 * (InstancePool, ProcessState::followWrittenBy()): HandleExceptions::$app, Uri's URL generator
 * resolver, the paginator's resolvers, Queue's payload callbacks, the middleware redirect callbacks
 * of bootstrap/app.php, request macros. What is left shared is configuration set alike by every
 * boot and read-only afterwards, and caches computed from class and string names only (Str's case
 * caches, Component's reflection caches).
 *
 * @internal
 */
final class FollowedState
{
    /** @var array<class-string, array<string, string>> class => property => why it follows */
    public const STATICS = [
        'Illuminate\Container\Container' => [
            'instance' => 'the current application: app(), config(), request(), auth() and every helper resolve through it',
        ],
        'Illuminate\Support\Facades\Facade' => [
            'app' => 'the application every facade resolves from',
            'resolvedInstance' => 'the services facades resolved (DB, Auth, Session, Log...): one instance\'s, never another\'s',
        ],
        'Illuminate\Database\Eloquent\Model' => [
            'resolver' => 'the database manager (and so the PDO connection) models query through',
            'dispatcher' => 'the event dispatcher model events and observers go to',
            'booted' => 'a model boots once per instance: what its booted() registers (observers, event listeners) goes to that instance\'s dispatcher',
            'globalScopes' => 'scopes added while models boot and by code during a request (a tenant\'s scope); the bridge also takes back what a request added',
        ],
        'Illuminate\View\Component' => [
            'factory' => 'the view factory components render with, and its shared data (View::share())',
        ],
        'Illuminate\Support\Once' => [
            'instance' => 'once() memoizes for one request',
        ],
        'Illuminate\Support\Number' => [
            'locale' => 'Number::useLocale() in a request',
            'currency' => 'Number::useCurrency() in a request',
        ],
    ];

    /** Registers every entry that exists in the installed version; returns the names followed. */
    public static function register(): array
    {
        $names = [];
        foreach (self::STATICS as $class => $properties) {
            foreach ($properties as $property => $_) {
                if (ProcessState::followStatic($class, $property)) {
                    $names[] = "$class::\$$property";
                }
            }
        }
        // Carbon's locale is process-wide (App::setLocale() sets it through the LocaleUpdated event).
        if (class_exists(\Carbon\Carbon::class)) {
            // Read at every switch: Carbon 3 keeps its translator on its factory, read there directly, three
            // frames fewer than Carbon::getLocale() (through getLocaleAwareTranslator() and getTranslator());
            // any other version, or a factory that does not answer as Carbon does, is read the long way.
            $get = static fn (): string => \Carbon\Carbon::getLocale();
            if (\method_exists(\Carbon\FactoryImmutable::class, 'getInstance') && \method_exists(\Carbon\Factory::class, 'getTranslator')) {
                $direct = static fn (): string => \Carbon\FactoryImmutable::getInstance()->getTranslator()->getLocale();
                try {
                    if ($direct() === $get()) {
                        $get = $direct;
                    }
                } catch (\Throwable) {
                    // not Carbon 3's shape: the long way
                }
            }
            ProcessState::follow(
                'Carbon\Carbon::locale',
                $get,
                static function (mixed $locale): void {
                    if (\is_string($locale) && \Carbon\Carbon::getLocale() !== $locale) {
                        \Carbon\Carbon::setLocale($locale);
                    }
                },
            );
            $names[] = 'Carbon\Carbon::locale';
        }
        return $names;
    }
}
