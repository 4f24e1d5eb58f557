<?php

declare(strict_types=1);

namespace Weft\Tests\Unit\Ext;

use PhpParser\Node;
use PhpParser\Node\Stmt\ClassLike;
use PhpParser\Node\Stmt\ClassMethod;
use PhpParser\Node\Stmt\Function_;
use PhpParser\NodeFinder;
use PhpParser\NodeTraverser;
use PhpParser\NodeVisitor\NameResolver;
use PhpParser\ParserFactory;
use PHPUnit\Framework\TestCase;

/**
 * weft_arginfo.h is written by hand to match ext/weft.stub.php (nothing generates it in the build): the
 * loaded extension must declare every function and method of the stub with the same parameters (names,
 * how many are required, by reference or not) and the same return type, and nothing the stub does not.
 */
final class StubTest extends TestCase
{
    public function testTheLoadedExtensionDeclaresWhatItsStubSays(): void
    {
        if (!\extension_loaded('weft')) {
            self::markTestSkipped('the weft extension is not loaded (bash scripts/build-ext.sh)');
        }
        $stub = self::stub();
        self::assertGreaterThan(50, \count($stub), 'the stub was read');
        $mismatches = [];
        foreach ($stub as $name => $expected) {
            try {
                $actual = self::describe(\str_contains($name, '::') ? new \ReflectionMethod($name) : new \ReflectionFunction($name));
            } catch (\ReflectionException) {
                $mismatches[] = "$name: in the stub, not in the extension";
                continue;
            }
            if ($actual !== $expected) {
                $mismatches[] = "$name: the stub says " . \json_encode($expected) . ', the extension ' . \json_encode($actual);
            }
        }
        $extension = new \ReflectionExtension('weft');
        foreach ($extension->getFunctions() as $function) {
            if (!isset($stub[$function->getName()])) {
                $mismatches[] = $function->getName() . ': in the extension, not in the stub';
            }
        }
        foreach ($extension->getClasses() as $class) {
            foreach ($class->getMethods() as $method) {
                if ($method->getDeclaringClass()->getName() === $class->getName() && $method->getDeclaringClass()->getExtensionName() === 'weft'
                    && !isset($stub[$class->getName() . '::' . $method->getName()])) {
                    $mismatches[] = $class->getName() . '::' . $method->getName() . ': in the extension, not in the stub';
                }
            }
        }
        self::assertSame([], $mismatches, "weft_arginfo.h and weft.stub.php disagree:\n" . \implode("\n", $mismatches));
    }

    /** @return array<string, array{params: list<string>, required: int, returns: string}> by function or Class::method */
    private static function stub(): array
    {
        $ast = (new ParserFactory())->createForHostVersion()->parse((string) \file_get_contents(\dirname(__DIR__, 3) . '/ext/weft.stub.php'));
        $traverser = new NodeTraverser(new NameResolver());
        $ast = $traverser->traverse($ast ?? []);
        $found = [];
        $finder = new NodeFinder();
        foreach ($finder->findInstanceOf($ast, Function_::class) as $function) {
            $found[(string) $function->namespacedName] = self::declared($function);
        }
        foreach ($finder->findInstanceOf($ast, ClassLike::class) as $class) {
            foreach ($class->getMethods() as $method) {
                $found[$class->namespacedName . '::' . $method->name] = self::declared($method);
            }
        }
        return $found;
    }

    /** @return array{params: list<string>, required: int, returns: string} */
    private static function declared(Function_|ClassMethod $function): array
    {
        $params = [];
        $required = 0;
        foreach ($function->params as $i => $param) {
            $params[] = ($param->byRef ? '&' : '') . ($param->variadic ? '...' : '') . $param->var->name;
            if ($param->default === null && !$param->variadic) {
                $required = $i + 1;
            }
        }
        return ['params' => $params, 'required' => $required, 'returns' => self::type($function->returnType)];
    }

    /** @return array{params: list<string>, required: int, returns: string} */
    private static function describe(\ReflectionFunctionAbstract $function): array
    {
        $params = [];
        foreach ($function->getParameters() as $param) {
            $params[] = ($param->isPassedByReference() ? '&' : '') . ($param->isVariadic() ? '...' : '') . $param->getName();
        }
        $type = $function->hasTentativeReturnType() ? $function->getTentativeReturnType() : $function->getReturnType();
        return ['params' => $params, 'required' => $function->getNumberOfRequiredParameters(), 'returns' => self::normal((string) $type)];
    }

    private static function type(?Node $type): string
    {
        if ($type === null) {
            return '';
        }
        $text = match (true) {
            $type instanceof Node\NullableType => '?' . self::type($type->type),
            $type instanceof Node\UnionType => \implode('|', \array_map(self::type(...), $type->types)),
            $type instanceof Node\Name => $type->toString(),
            $type instanceof Node\Identifier => $type->toString(),
            default => throw new \LogicException('a type the test does not read: ' . $type::class),
        };
        return self::normal($text);
    }

    /** A type as a sorted set of lower-case parts, "?T" as "T|null", so that the stub's spelling and Reflection's compare. */
    private static function normal(string $type): string
    {
        if ($type === '') {
            return '';
        }
        if (\str_starts_with($type, '?')) {
            $type = \substr($type, 1) . '|null';
        }
        $parts = \array_map(static fn (string $p): string => \strtolower(\ltrim($p, '\\')), \explode('|', $type));
        \sort($parts);
        return \implode('|', $parts);
    }
}
