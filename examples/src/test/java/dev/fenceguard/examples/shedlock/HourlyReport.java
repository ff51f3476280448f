package dev.fenceguard.examples.shedlock;

import dev.fenceguard.core.FenceToken;
import dev.fenceguard.core.LockContext;
import dev.fenceguard.jooq.Assignments;
import dev.fenceguard.jooq.FencedTable;
import javax.sql.DataSource;
import net.javacrumbs.shedlock.spring.annotation.SchedulerLock;
import org.springframework.scheduling.annotation.Scheduled;

/** A scheduled job under ShedLock that writes its report with the fence of its run. */
class HourlyReport {
    private final FencedTable reports;
    private final DataSource dataSource;
    private int runs;

    HourlyReport(FencedTable reports, DataSource dataSource) {
        this.reports = reports;
        this.dataSource = dataSource;
    }

    String render() {
        return "report #" + ++runs;
    }

    // docs/shedlock.md: the job (begin)
    @Scheduled(cron = "0 0 * * * *")
    @SchedulerLock(name = "hourly-report", lockAtMostFor = "PT10M")
    public void hourlyReport() {
        FenceToken fence = LockContext.requireHeld("hourly-report").fence();
        reports.on(dataSource).update("hourly", fence, Assignments.of("body", render())).orThrow();   // refused once a newer run has written
    }
    // docs/shedlock.md: the job (end)
}
