<?php

declare(strict_types=1);

namespace App;

use Doctrine\DBAL\Connection;
use Doctrine\DBAL\DriverManager;
use Doctrine\DBAL\Tools\DsnParser;

final class Database
{
    public static function connect(?string $url): Connection
    {
        $params = (new DsnParser(['mysql' => 'pdo_mysql', 'mariadb' => 'pdo_mysql', 'pgsql' => 'pdo_pgsql']))->parse($url ?? 'mysql://weft:weft@127.0.0.1:13306/weft');
        return DriverManager::getConnection($params);
    }
}
