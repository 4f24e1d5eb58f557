<?php

declare(strict_types=1);

namespace App;

/** Bound with scoped(): one per request, even though boot already resolved one. */
final class RequestScoped
{
    public int $hits = 0;
}
