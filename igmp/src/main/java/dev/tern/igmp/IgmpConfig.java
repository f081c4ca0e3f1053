package dev.tern.igmp;

/**
 * IGMP host settings; the defaults are RFC 3376 §8's.
 *
 * @param robustness                 Robustness Variable: unsolicited reports are sent this many times
 * @param unsolicitedReportIntervalNs v3 interval between repetitions of a state-change report (1 s)
 * @param v2UnsolicitedReportIntervalNs v1/v2 interval between repetitions of a join report (RFC 2236: 10 s)
 * @param queryIntervalNs            assumed querier interval, for the Older Version Querier Present timeout (125 s)
 * @param queryResponseIntervalNs    assumed Query Response Interval, likewise (10 s)
 * @param maxGroups                  groups this host can be a member of at once
 * @param seed                       seed of the random report delays (deterministic tests)
 */
public record IgmpConfig(int robustness, long unsolicitedReportIntervalNs, long v2UnsolicitedReportIntervalNs,
                         long queryIntervalNs, long queryResponseIntervalNs, int maxGroups, long seed) {
    public static final IgmpConfig DEFAULT = new IgmpConfig(2, 1_000_000_000L, 10_000_000_000L, 125_000_000_000L,
        10_000_000_000L, 256, 0x5EED);

    public IgmpConfig {
        if (robustness < 1 || unsolicitedReportIntervalNs <= 0 || v2UnsolicitedReportIntervalNs <= 0
            || queryIntervalNs <= 0 || queryResponseIntervalNs <= 0 || maxGroups < 1) {
            throw new IllegalArgumentException("invalid IGMP configuration: " + this);
        }
    }

    /** RFC 3376 §8.12: how long after hearing an older querier the host keeps speaking its version. */
    public long olderQuerierPresentTimeoutNs() {
        return robustness * queryIntervalNs + queryResponseIntervalNs;
    }
}
