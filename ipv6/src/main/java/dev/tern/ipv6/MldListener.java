package dev.tern.ipv6;

import dev.tern.core.checksum.InternetChecksum;
import dev.tern.core.memory.BigEndian;
import dev.tern.core.net.Ipv6Address;
import dev.tern.core.time.Timers;
import dev.tern.ipv6.wire.Icmpv6Header;
import dev.tern.ipv6.wire.NextHeader;

import java.lang.foreign.MemorySegment;
import java.util.SplittableRandom;

/**
 * The multicast listener side of MLDv2 (RFC 3810) with MLDv1 compatibility (RFC 2710, RFC 3810 §8), for the groups
 * the stack itself listens to: the solicited-node group of each address (all-nodes, ff02::1, is never reported,
 * §6), and the groups applications join ({@link #join}, {@link #leave}: any source, reference-counted, at most
 * {@link #MAX_APPLICATION_GROUPS}; interface-local ones, ff01::/16, are listened to but never reported, §6). Without
 * reports a switch that snoops MLD would not forward the solicitations for our addresses, or a group's datagrams,
 * to us.
 *
 * <ul>
 *   <li>On start each group is announced by a state-change report (CHANGE_TO_EXCLUDE_MODE with no sources: every
 *       source), repeated Robustness Variable times, 2, at random intervals within the Unsolicited Report Interval,
 *       1 s (§6.1); a group dropped (its address a duplicate) is reported as CHANGE_TO_INCLUDE_MODE {} likewise.</li>
 *   <li>A general query is answered with one current-state report of every group (MODE_IS_EXCLUDE), a
 *       group-specific query with that group's, after a random delay within the query's Maximum Response Delay
 *       (§6.2). A query must come from a link-local address with hop limit 1 (§5.1.14), else it is dropped.</li>
 *   <li>An MLDv1 query puts the listener in MLDv1 mode for the Older Version Querier Present Timeout (§8.2.1): its
 *       answers are then v1 reports, one per group, sent to the group.</li>
 * </ul>
 *
 * <p>Every message goes from the link-local address (or the unspecified one while that is tentative, §5.2.13) with
 * hop limit 1 and a Router Alert in a hop-by-hop header (RFC 2711), as §5 requires. Other listeners' reports are
 * counted and otherwise ignored (a host does no report suppression in MLDv2).
 *
 * <p>Owned by the shard thread; not thread-safe.
 */
final class MldListener {
    static final int QUERY = 130;
    static final int V1_REPORT = 131;
    static final int V1_DONE = 132;
    static final int V2_REPORT = 143;
    private static final int MODE_IS_EXCLUDE = 2;
    private static final int CHANGE_TO_INCLUDE = 3;
    private static final int CHANGE_TO_EXCLUDE = 4;
    private static final int ROBUSTNESS = 2;
    private static final long UNSOLICITED_INTERVAL_NS = 1_000_000_000L;
    /** §9.12: Robustness × Query Interval (125 s) + Query Response Interval (10 s). */
    private static final long OLDER_QUERIER_TIMEOUT_NS = 260_000_000_000L;
    /** Hop-by-hop header with Router Alert (MLD, value 0) and PadN: next header, length 0, 05 02 00 00, 01 00. */
    private static final long ROUTER_ALERT_HEADER = 0x3a00_0502_0000_0100L;
    private static final int HOP_BY_HOP_LENGTH = 8;
    private static final int RECORD_LENGTH = 20;
    private static final int V1_LENGTH = 24;
    /** Groups applications may join at once (Linux's net.ipv6.mld_max_msf is per socket; this is per stack). */
    static final int MAX_APPLICATION_GROUPS = 64;

    private final Ipv6Layer ipv6;
    /** Another stack on the link reports our groups (Ipv6Layer's constructor): the state runs, nothing is sent. */
    private final boolean silent;
    private final Ipv6Addresses addresses;
    private final Ipv6Counters counters;
    private final Timers timers;
    private final int timerOwner;
    private final SplittableRandom random;
    /** The groups, deduplicated; {@code groupCount} in use. Solicited-node groups' high word is ff02::. */
    private final long[] groupHighs;
    private final long[] groups;
    private int groupCount;
    /** Applications' memberships of each group (0 for a solicited-node group). */
    private final int[] members;
    private final boolean[] joined;
    /** State-change reports of each group still to send, and when the next is due. */
    private final int[] changesLeft;
    private final long[] changeDueNs;
    /** A group-specific query's answer, when due (Long.MAX_VALUE: none). */
    private final long[] answerDueNs;
    /** Scratch: the groups of the report being made. */
    private final boolean[] changing;
    private final boolean[] answering;
    private long generalAnswerDueNs = Long.MAX_VALUE;
    /** An MLDv1 querier was heard, and until when its mode lasts (§8.2.1). */
    private boolean v1Querier;
    private long v1UntilNs;
    private final Icmpv6Header tx = new Icmpv6Header();
    private long timer = -1;

    MldListener(Ipv6Layer ipv6, Ipv6Addresses addresses, Timers timers, long mac, Ipv6Counters counters,
                boolean silent) {
        this.silent = silent;
        this.ipv6 = ipv6;
        this.addresses = addresses;
        this.counters = counters;
        this.timers = timers;
        this.timerOwner = timers.register(this::onTimer);
        this.random = new SplittableRandom(mac * 0x9E37_79B9_7F4A_7C15L);
        final int n = addresses.capacity() + MAX_APPLICATION_GROUPS;
        this.groupHighs = new long[n];
        this.groups = new long[n];
        this.members = new int[n];
        for (int i = 0; i < addresses.count(); i++) {
            final long group = Ipv6Address.solicitedNodeLow(addresses.low(i));
            if (find(Ipv6Address.LINK_SCOPE_MULTICAST_HIGH, group) < 0) {
                groupHighs[groupCount] = Ipv6Address.LINK_SCOPE_MULTICAST_HIGH;
                groups[groupCount++] = group;
            }
        }
        this.joined = new boolean[n];
        this.changesLeft = new int[n];
        this.changeDueNs = new long[n];
        this.answerDueNs = new long[n];
        this.changing = new boolean[n];
        this.answering = new boolean[n];
        java.util.Arrays.fill(changeDueNs, Long.MAX_VALUE);
        java.util.Arrays.fill(answerDueNs, Long.MAX_VALUE);
    }

    private int find(long high, long low) {
        for (int g = 0; g < groupCount; g++) {
            if (groups[g] == low && groupHighs[g] == high) {
                return g;
            }
        }
        return -1;
    }

    /** A free row for a group: one neither joined nor with reports left to send, else a new one; -1 when full. */
    private int freeRow() {
        for (int g = 0; g < groupCount; g++) {
            if (!joined[g] && changesLeft[g] == 0 && members[g] == 0) {
                return g;
            }
        }
        return groupCount < groups.length ? groupCount++ : -1;
    }

    /** §6: interface-local groups and all-nodes are never reported. */
    private static boolean reported(long high, long low) {
        final int scope = (int) (high >>> 48) & 0xf;
        return scope > 1 && !(high == Ipv6Address.LINK_SCOPE_MULTICAST_HIGH && low == Ipv6Address.ALL_NODES.low());
    }

    /**
     * An application joins the group ({@code high}, {@code low}) for any source (RFC 3810 §6.1: a state-change
     * report, CHANGE_TO_EXCLUDE {}, at once and again within a second). Returns false when
     * {@link #MAX_APPLICATION_GROUPS} groups are joined already. Reference-counted: the report goes with the first.
     */
    boolean join(long high, long low, long nowNs) {
        int g = find(high, low);
        if (g < 0) {
            if (applicationGroups() >= MAX_APPLICATION_GROUPS || (g = freeRow()) < 0) {
                return false;
            }
            groupHighs[g] = high;
            groups[g] = low;
        }
        members[g]++;
        if (joined[g]) {
            return true;
        }
        joined[g] = true;
        changesLeft[g] = reported(high, low) ? ROBUSTNESS : 0;
        changeDueNs[g] = changesLeft[g] > 0 ? nowNs : Long.MAX_VALUE;
        run(nowNs);
        return true;
    }

    /** An application leaves the group; with the last member it is reported left (CHANGE_TO_INCLUDE {}). */
    void leave(long high, long low, long nowNs) {
        final int g = find(high, low);
        if (g < 0 || members[g] == 0 || --members[g] > 0) {
            return;
        }
        if (high == Ipv6Address.LINK_SCOPE_MULTICAST_HIGH && addresses.listensTo(high, low)) {
            return; // the solicited-node group of one of our addresses: still ours
        }
        joined[g] = false;
        changesLeft[g] = reported(high, low) ? ROBUSTNESS : 0;
        changeDueNs[g] = changesLeft[g] > 0 ? nowNs : Long.MAX_VALUE;
        answerDueNs[g] = Long.MAX_VALUE;
        run(nowNs);
    }

    /** Whether an application joined the group (a datagram to it is then accepted). */
    boolean member(long high, long low) {
        final int g = find(high, low);
        return g >= 0 && members[g] > 0;
    }

    private int applicationGroups() {
        int n = 0;
        for (int g = 0; g < groupCount; g++) {
            n += members[g] > 0 ? 1 : 0;
        }
        return n;
    }

    /** A new address's group: joined and announced as on start, unless we listen to it already. */
    void addressAdded(long low, long nowNs) {
        final long group = Ipv6Address.solicitedNodeLow(low);
        int g = find(Ipv6Address.LINK_SCOPE_MULTICAST_HIGH, group);
        if (g >= 0 && joined[g]) {
            return;
        }
        if (g < 0) {
            if ((g = freeRow()) < 0) {
                return;
            }
            groupHighs[g] = Ipv6Address.LINK_SCOPE_MULTICAST_HIGH;
            groups[g] = group;
        }
        joined[g] = true;
        changesLeft[g] = ROBUSTNESS;
        changeDueNs[g] = nowNs;
        run(nowNs);
    }

    void start(long nowNs) {
        for (int g = 0; g < groupCount; g++) {
            joined[g] = true;
            changesLeft[g] = ROBUSTNESS;
            changeDueNs[g] = nowNs;
        }
        run(nowNs);
    }

    /** The group of a duplicate address is left, unless another address of ours shares it. */
    void addressLost(long low, long nowNs) {
        final long group = Ipv6Address.solicitedNodeLow(low);
        if (addresses.listensTo(Ipv6Address.LINK_SCOPE_MULTICAST_HIGH, group)) {
            return;
        }
        for (int g = 0; g < groupCount; g++) {
            if (groups[g] == group && groupHighs[g] == Ipv6Address.LINK_SCOPE_MULTICAST_HIGH && joined[g]
                && members[g] == 0) {
                joined[g] = false;
                changesLeft[g] = ROBUSTNESS;
                changeDueNs[g] = nowNs;
                answerDueNs[g] = Long.MAX_VALUE;
            }
        }
        run(nowNs);
    }

    /** An MLD query (§5.1): validated, then answered after a random part of its Maximum Response Delay (§6.2). */
    void onQuery(Ipv6Packet packet, MemorySegment segment, long offset, int length, long nowNs) {
        counters.mldRxQueries.incrementRelease();
        if (packet.hopLimit != 1 || !Ipv6Address.isLinkLocal(packet.sourceHigh) || length < V1_LENGTH) {
            counters.mldDropInvalid.incrementRelease();
            return;
        }
        final boolean v1 = length < 28;
        final long groupHigh = BigEndian.i64(segment, offset + 8);
        final long groupLow = BigEndian.i64(segment, offset + 16);
        final long maxDelayNs;
        if (v1) {
            maxDelayNs = BigEndian.u16(segment, offset + 4) * 1_000_000L;
            v1Querier = true;
            v1UntilNs = nowNs + OLDER_QUERIER_TIMEOUT_NS;
            counters.mldRxV1Queries.incrementRelease();
        } else {
            maxDelayNs = maxResponseDelayMs(BigEndian.u16(segment, offset + 4)) * 1_000_000L;
        }
        final long dueNs = nowNs + (maxDelayNs <= 1 ? 0 : random.nextLong(maxDelayNs));
        if (groupHigh == 0 && groupLow == 0) {
            if (v1) {
                for (int g = 0; g < groupCount; g++) {
                    if (joined[g] && reported(groupHighs[g], groups[g])) {
                        answerDueNs[g] = Math.min(answerDueNs[g], dueNs);
                    }
                }
            } else {
                generalAnswerDueNs = Math.min(generalAnswerDueNs, dueNs);
            }
        } else {
            for (int g = 0; g < groupCount; g++) {
                if (groups[g] == groupLow && groupHighs[g] == groupHigh && joined[g] && reported(groupHigh, groupLow)) {
                    answerDueNs[g] = Math.min(answerDueNs[g], dueNs);
                }
            }
        }
        schedule(nowNs);
    }

    /** §5.1.3: the Maximum Response Code in milliseconds, exponential above 32767. */
    static long maxResponseDelayMs(int code) {
        if (code < 32768) {
            return code;
        }
        final int exp = (code >>> 12) & 0x7;
        final int mant = code & 0xfff;
        return (long) (mant | 0x1000) << (exp + 3);
    }

    private void onTimer(long value, long nowNs) {
        timer = -1;
        run(nowNs);
    }

    /** Sends whatever is due (records due together in one report, §6.1), then arms the timer for what is next. */
    private void run(long nowNs) {
        final boolean v1 = v1Querier && nowNs - v1UntilNs < 0;
        boolean anyChange = false;
        boolean anyAnswer = false;
        for (int g = 0; g < groupCount; g++) {
            changing[g] = changeDueNs[g] - nowNs <= 0 && changesLeft[g] > 0;
            answering[g] = answerDueNs[g] - nowNs <= 0 && joined[g];
            if (answerDueNs[g] - nowNs <= 0) {
                answerDueNs[g] = Long.MAX_VALUE;
            }
            anyChange |= changing[g];
            anyAnswer |= answering[g];
        }
        if (anyChange) {
            for (int g = 0; g < groupCount; g++) {
                if (changing[g] && v1) {
                    sendV1(joined[g] ? V1_REPORT : V1_DONE, g, nowNs);
                }
            }
            if (!v1) {
                sendV2(changing, true, nowNs);
            }
            // One retransmission time for the report's records together, so that they go in one report again.
            final long again = nowNs + 1 + random.nextLong(UNSOLICITED_INTERVAL_NS);
            for (int g = 0; g < groupCount; g++) {
                if (changing[g]) {
                    changesLeft[g]--;
                    changeDueNs[g] = changesLeft[g] > 0 ? again : Long.MAX_VALUE;
                }
            }
        }
        if (generalAnswerDueNs - nowNs <= 0) {
            generalAnswerDueNs = Long.MAX_VALUE;
            for (int g = 0; g < groupCount; g++) {
                answering[g] = joined[g] && reported(groupHighs[g], groups[g]);
            }
            anyAnswer = true;
        }
        if (anyAnswer) {
            for (int g = 0; g < groupCount; g++) {
                if (answering[g] && v1) {
                    sendV1(V1_REPORT, g, nowNs);
                }
            }
            if (!v1) {
                sendV2(answering, false, nowNs);
            }
        }
        schedule(nowNs);
    }

    private void schedule(long nowNs) {
        long next = generalAnswerDueNs;
        for (int g = 0; g < groupCount; g++) {
            next = Math.min(next, Math.min(changeDueNs[g], answerDueNs[g]));
        }
        if (timer >= 0) {
            timers.cancel(timer);
            timer = -1;
        }
        if (next != Long.MAX_VALUE) {
            timer = timers.schedule(timerOwner, Math.max(next, nowNs), 0);
        }
    }

    /**
     * An MLDv2 report (§5.2) of the groups {@code selected}: state-change records (CHANGE_TO_EXCLUDE for a group
     * joined, CHANGE_TO_INCLUDE for one left) when {@code change}, else current-state ones (MODE_IS_EXCLUDE).
     */
    private void sendV2(boolean[] selected, boolean change, long nowNs) {
        int records = 0;
        for (int g = 0; g < groupCount; g++) {
            records += selected[g] ? 1 : 0;
        }
        if (records == 0) {
            return;
        }
        final int mldLength = 8 + records * RECORD_LENGTH;
        if (!open(Ipv6Address.ALL_MLDV2_ROUTERS.high(), Ipv6Address.ALL_MLDV2_ROUTERS.low(), mldLength, nowNs)) {
            return;
        }
        final MemorySegment out = ipv6.segment();
        final long at = ipv6.payloadOffset() + HOP_BY_HOP_LENGTH;
        tx.wrap(out, at, mldLength).type(V2_REPORT).code(0).checksum(0).word(records);
        long record = at + 8;
        for (int g = 0; g < groupCount; g++) {
            if (selected[g]) {
                final int type = !change ? MODE_IS_EXCLUDE : joined[g] ? CHANGE_TO_EXCLUDE : CHANGE_TO_INCLUDE;
                BigEndian.i32(out, record, type << 24); // aux data length 0, no sources
                BigEndian.i64(out, record + 4, groupHighs[g]);
                BigEndian.i64(out, record + 12, groups[g]);
                record += RECORD_LENGTH;
            }
        }
        finish(at, mldLength);
    }

    /** An MLDv1 report or done (RFC 2710 §3): a report to the group, a done to all routers. */
    private void sendV1(int type, int g, long nowNs) {
        final long dh = type == V1_DONE ? Ipv6Address.LINK_SCOPE_MULTICAST_HIGH : groupHighs[g];
        final long dl = type == V1_DONE ? Ipv6Address.ALL_ROUTERS.low() : groups[g];
        if (!open(dh, dl, V1_LENGTH, nowNs)) {
            return;
        }
        final MemorySegment out = ipv6.segment();
        final long at = ipv6.payloadOffset() + HOP_BY_HOP_LENGTH;
        tx.wrap(out, at, V1_LENGTH).type(type).code(0).checksum(0).word(0);
        BigEndian.i64(out, at + 8, groupHighs[g]);
        BigEndian.i64(out, at + 16, groups[g]);
        finish(at, V1_LENGTH);
    }

    private boolean open(long dh, long dl, int mldLength, long nowNs) {
        if (silent) {
            return false;
        }
        final boolean linkLocalReady = addresses.state(0) == Ipv6Addresses.PREFERRED;
        final int opened = ipv6.beginFrom(linkLocalReady ? addresses.high(0) : 0, linkLocalReady ? addresses.low(0) : 0,
            dh, dl, NextHeader.HOP_BY_HOP, HOP_BY_HOP_LENGTH + mldLength, 1, 0, nowNs);
        if (opened != Ipv6Layer.OK) {
            return false;
        }
        BigEndian.i64(ipv6.segment(), ipv6.payloadOffset(), ROUTER_ALERT_HEADER);
        return true;
    }

    private void finish(long at, int mldLength) {
        final MemorySegment out = ipv6.segment();
        final long sum = ipv6.pseudoHeaderSum(mldLength, NextHeader.ICMPV6);
        tx.checksum(InternetChecksum.finish(InternetChecksum.add(sum, out, at, mldLength)));
        ipv6.commit();
        counters.mldTxReports.incrementRelease();
    }
}
