package dev.fenceguard.jdbc.internal;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.Optional;
import org.junit.jupiter.api.Test;

/** Which database a connection is to, by what the driver reports: MySQL Connector/J calls a MariaDB server "MySQL". */
class DatabaseTest {

    @Test
    void theProductAndVersionTheDriversReportNameTheDatabase() {
        assertThat(Database.fromProduct("PostgreSQL", "16.4")).contains(Database.POSTGRESQL);
        assertThat(Database.fromProduct("MariaDB", "10.11.8-MariaDB-ubu2204")).contains(Database.MARIADB);
        assertThat(Database.fromProduct("MySQL", "10.11.8-MariaDB-ubu2204")).as("MySQL Connector/J on MariaDB").contains(Database.MARIADB);
        assertThat(Database.fromProduct("MySQL", "8.0.36")).contains(Database.MYSQL);
        assertThat(Database.fromProduct("H2", "2.3.232")).isEqualTo(Optional.empty());
        assertThat(Database.fromProduct(null, null)).isEmpty();
    }
}
