#ifndef CLAWRELAY_CAFFINITY_H
#define CLAWRELAY_CAFFINITY_H

/// sched_setaffinity and sched_getaffinity need _GNU_SOURCE, which Swift's Glibc module does not set.

/// Lets thread `tid` (0: the calling thread) run only on CPU `cpu`. 0, or -1 with errno set.
int relay_pin_to_cpu(int tid, int cpu);

/// Writes the CPUs thread `tid` (0: the calling thread) may run on into `cpus`, at most
/// `capacity` of them, lowest first. Their count, or -1 with errno set.
int relay_allowed_cpus(int tid, int *cpus, int capacity);

#endif
