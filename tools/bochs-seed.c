/* Preloaded into Bochs (tools/run-bochs.sh) so that a boot replays exactly.
 * Bochs 3.0 reads the host's clock in one place that reaches the guest:
 * cpu/init.cc seeds the C library's rand(), which RDRAND and RDSEED return,
 * with time(NULL) (the CMOS clock is fixed by "clock: time0=", the VGA timer
 * by "vga: realtime=0"). time() here returns HV_BOCHS_SEED instead, so the
 * seed is the run's: the same seed, the same boot. Nothing else in Bochs
 * calls time() while the guest runs with those settings. */
#include <stdlib.h>
#include <sys/time.h>
#include <time.h>

time_t time(time_t *t)
{
	const char *s = getenv("HV_BOCHS_SEED");
	time_t v = s ? (time_t)strtoll(s, NULL, 0) : 946684800;
	if (t)
		*t = v;
	return v;
}

/* Bochs's realtime timer queue (iodev/virt_timer.cc: "Null Timer #2" is
 * registered realtime whatever the configuration) advances by
 * gettimeofday(); its system timer then fires at instruction counts that
 * depend on the host's speed and load, and the CPUs' turns move with it.
 * Frozen here: with "clock: sync=none" nothing may follow the host's clock. */
int gettimeofday(struct timeval *restrict tv, void *restrict tz)
{
	(void)tz;
	if (tv) {
		tv->tv_sec = 946684800;
		tv->tv_usec = 0;
	}
	return 0;
}
