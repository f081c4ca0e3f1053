package dev.tern.igmp;

import dev.tern.core.counters.CountersFile;
import dev.tern.core.net.Ipv4Address;
import dev.tern.core.time.Timers;
import dev.tern.ethernet.EthernetLayer;
import dev.tern.ethernet.wire.MacAddress;
import dev.tern.igmp.wire.IgmpMessage;
import dev.tern.ipv4.IpProtocolHandler;
import dev.tern.ipv4.Ipv4Layer;
import dev.tern.ipv4.Ipv4Packet;
import dev.tern.ipv4.MulticastFilter;
import dev.tern.ipv4.wire.IpProtocol;
import org.agrona.collections.Int2ObjectHashMap;
import org.agrona.concurrent.status.AtomicCounter;

import java.lang.foreign.MemorySegment;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.SplittableRandom;

/**
 * IGMP for a host (RFC 3376 IGMPv3, with the compatibility modes of RFC 3376 §7 for IGMPv2 (RFC 2236) and v1).
 *
 * <p>Each socket's membership of a group (a filter mode and source list, RFC 3376 §3.1) is recorded here under
 * an owner id; the interface state of each group is merged from them by the rules of RFC 3376 §3.2. That state
 * decides which multicast datagrams are received ({@link MulticastFilter}), which multicast MACs the link
 * accepts, and what is reported:
 * <ul>
 *   <li>a change of interface state sends a State-Change Report at once (TO_IN/TO_EX when the filter mode changes,
 *       ALLOW/BLOCK when only sources do, RFC 3376 §5.1) and repeats it Robustness-1 times at random intervals
 *       within the Unsolicited Report Interval;</li>
 *   <li>queries are answered after a random delay within their Max Resp Time: a general query with one
 *       Current-State Report of every group, a group(-and-source)-specific query with a record for that group
 *       (RFC 3376 §5.2);</li>
 *   <li>after hearing a v2 (or v1) query, the host speaks v2 (v1) for the Older Version Querier Present Timeout:
 *       v2 reports to the group, leaves to 224.0.0.2, report suppression when another host reports first, source
 *       lists ignored (RFC 3376 §7.2, RFC 2236 §3).</li>
 * </ul>
 *
 * <p>Deviation: RFC 3376 §5.1 asks that a new state change arriving while earlier retransmissions are pending be
 * merged into them. We retransmit the most recent change's records instead (for a filter-mode change the TO_IN /
 * TO_EX of the current state, which subsumes what came before). A querier therefore sees the current state; only
 * source-level ALLOW/BLOCK history between two retransmissions can be lost, which the next query repairs.
 *
 * <p>Owned by the shard thread; membership changes are cold path, {@link #accepts} is the per-datagram check.
 */
public final class IgmpLayer implements IpProtocolHandler, MulticastFilter {
    public static final int INCLUDE = 1;
    public static final int EXCLUDE = 2;
    private static final int[] NONE = new int[0];
    private static final int KIND_GROUP_RESPONSE = 0;
    private static final int KIND_STATE_CHANGE = 1;
    private static final int KIND_GENERAL_RESPONSE = 2;
    private static final int VERSION_1 = 1;
    private static final int VERSION_2 = 2;
    private static final int VERSION_3 = 3;

    /** Interface state of one group, the memberships it merges, and its pending reports. */
    private static final class Group {
        final int address;
        final int slot;
        int mode = INCLUDE;
        int[] sources = NONE;
        final List<int[]> memberships = new ArrayList<>(); // {owner, mode, sources...}
        long responseTimer = -1;
        long responseDeadlineNs;
        int[] responseSources;           // null: group-specific response; else sources asked about
        long changeTimer = -1;
        int changeRepeats;
        int[] changeRecordTypes = NONE;
        int[][] changeRecordSources = new int[0][];

        Group(int address, int slot) {
            this.address = address;
            this.slot = slot;
        }

        boolean empty() {
            return mode == INCLUDE && sources.length == 0;
        }
    }

    private final Ipv4Layer ipv4;
    private final EthernetLayer ethernet;
    private final Timers timers;
    private final int timerOwner;
    private final IgmpConfig config;
    private final SplittableRandom random;
    private final IgmpMessage rx = new IgmpMessage();
    private final IgmpMessage tx = new IgmpMessage();
    private final Int2ObjectHashMap<Group> groups = new Int2ObjectHashMap<>();
    private final Group[] slots;
    private long generalTimer = -1;
    private long generalDeadlineNs;
    private long v1QuerierUntilNs = Long.MIN_VALUE;
    private long v2QuerierUntilNs = Long.MIN_VALUE;
    private boolean v1Seen;
    private boolean v2Seen;

    private final AtomicCounter rxQueries;
    private final AtomicCounter rxQueriesV1V2;
    private final AtomicCounter rxReports;
    private final AtomicCounter dropTooShort;
    private final AtomicCounter dropBadChecksum;
    private final AtomicCounter dropBadLength;
    private final AtomicCounter dropOther;
    private final AtomicCounter txReportsV3;
    private final AtomicCounter txReportsV2;
    private final AtomicCounter txReportsV1;
    private final AtomicCounter txLeaves;
    private final AtomicCounter suppressed;

    public IgmpLayer(Ipv4Layer ipv4, Timers timers, IgmpConfig config, CountersFile counters) {
        this.ipv4 = ipv4;
        this.ethernet = ipv4.ethernet();
        this.timers = timers;
        this.config = config;
        this.random = new SplittableRandom(config.seed() ^ ipv4.address().address());
        this.slots = new Group[config.maxGroups()];
        this.rxQueries = counters.counter("igmp.rx.queries");
        this.rxQueriesV1V2 = counters.counter("igmp.rx.queries_v1_v2");
        this.rxReports = counters.counter("igmp.rx.reports_from_others");
        this.dropTooShort = counters.counter("igmp.drop.too_short");
        this.dropBadChecksum = counters.counter("igmp.drop.bad_checksum");
        this.dropBadLength = counters.counter("igmp.drop.bad_length");
        this.dropOther = counters.counter("igmp.drop.unknown_type");
        this.txReportsV3 = counters.counter("igmp.tx.reports_v3");
        this.txReportsV2 = counters.counter("igmp.tx.reports_v2");
        this.txReportsV1 = counters.counter("igmp.tx.reports_v1");
        this.txLeaves = counters.counter("igmp.tx.leaves");
        this.suppressed = counters.counter("igmp.tx.reports_suppressed");
        this.timerOwner = timers.register(this::onTimer);
        ipv4.register(IpProtocol.IGMP, this);
        ipv4.multicastFilter(this);
        // Every host receives 224.0.0.1, where general queries go (RFC 1112 §4).
        ethernet.addMulticast(MacAddress.ofIpv4Multicast(Ipv4Address.ALL_SYSTEMS));
    }

    // ------------------------------------------------------------------------------------- membership (cold)

    /**
     * Sets {@code owner}'s membership of {@code group}: {@link #INCLUDE} only {@code sources}, or {@link #EXCLUDE}
     * them ({@code EXCLUDE} with none is an any-source join). Reports the change of interface state, if any.
     */
    public void join(int owner, int group, int mode, int[] sources, long nowNs) {
        if (!Ipv4Address.isMulticast(group) || group == Ipv4Address.ALL_SYSTEMS) {
            throw new IllegalArgumentException(Ipv4Address.format(group) + " is not a group one can join");
        }
        if (mode != INCLUDE && mode != EXCLUDE) {
            throw new IllegalArgumentException("filter mode must be INCLUDE or EXCLUDE");
        }
        Group state = groups.get(group);
        if (state == null) {
            state = newGroup(group);
        }
        state.memberships.removeIf(m -> m[0] == owner);
        if (mode == EXCLUDE || sources.length > 0) {
            final int[] membership = new int[2 + sources.length];
            membership[0] = owner;
            membership[1] = mode;
            System.arraycopy(sources, 0, membership, 2, sources.length);
            state.memberships.add(membership);
        }
        recompute(state, nowNs);
    }

    /** Drops {@code owner}'s membership of {@code group} (same as INCLUDE with no sources). */
    public void leave(int owner, int group, long nowNs) {
        final Group state = groups.get(group);
        if (state != null && state.memberships.removeIf(m -> m[0] == owner)) {
            recompute(state, nowNs);
        }
    }

    /** The interface state of {@code group}, for tools and tests: "INCLUDE(...)"/"EXCLUDE(...)", or "none". */
    public String describe(int group) {
        final Group state = groups.get(group);
        if (state == null || state.empty()) {
            return "none";
        }
        final StringBuilder text = new StringBuilder(state.mode == INCLUDE ? "INCLUDE(" : "EXCLUDE(");
        for (int i = 0; i < state.sources.length; i++) {
            text.append(i == 0 ? "" : ",").append(Ipv4Address.format(state.sources[i]));
        }
        return text.append(')').toString();
    }

    /** The IGMP version this host speaks now (3, or 2/1 while an older querier is present). */
    public int version(long nowNs) {
        if (v1Seen && v1QuerierUntilNs - nowNs > 0) {
            return VERSION_1;
        }
        if (v2Seen && v2QuerierUntilNs - nowNs > 0) {
            return VERSION_2;
        }
        return VERSION_3;
    }

    private Group newGroup(int group) {
        for (int slot = 0; slot < slots.length; slot++) {
            if (slots[slot] == null) {
                final Group state = new Group(group, slot);
                slots[slot] = state;
                groups.put(group, state);
                return state;
            }
        }
        throw new IllegalStateException("too many multicast groups (at most " + slots.length + ")");
    }

    /** RFC 3376 §3.2: merge the memberships into the interface state, and report the change. */
    private void recompute(Group state, long nowNs) {
        final int oldMode = state.mode;
        final int[] oldSources = state.sources;
        final boolean wasEmpty = state.empty();
        int[] include = NONE;
        int[] exclude = null;
        for (int[] membership : state.memberships) {
            final int[] sources = Arrays.copyOfRange(membership, 2, membership.length);
            if (membership[1] == EXCLUDE) {
                exclude = exclude == null ? sorted(sources) : intersection(exclude, sorted(sources));
            } else {
                include = union(include, sorted(sources));
            }
        }
        if (exclude != null) {
            state.mode = EXCLUDE;
            state.sources = difference(exclude, include);
        } else {
            state.mode = INCLUDE;
            state.sources = include;
        }
        if (state.mode == oldMode && Arrays.equals(state.sources, oldSources)) {
            return;
        }
        final long mac = MacAddress.ofIpv4Multicast(state.address);
        if (wasEmpty && !state.empty()) {
            ethernet.addMulticast(mac);
        } else if (!wasEmpty && state.empty()) {
            ethernet.removeMulticast(mac);
        }
        stateChanged(state, oldMode, oldSources, wasEmpty, nowNs);
        if (state.empty() && state.memberships.isEmpty() && state.changeTimer < 0) {
            release(state);
        }
    }

    private void stateChanged(Group state, int oldMode, int[] oldSources, boolean wasEmpty, long nowNs) {
        final int version = version(nowNs);
        if (version != VERSION_3) {
            // RFC 3376 §7.3.1: older versions only know joined or not.
            if (wasEmpty && !state.empty()) {
                sendV1V2(version == VERSION_1 ? IgmpMessage.V1_REPORT : IgmpMessage.V2_REPORT, state.address, nowNs);
                state.changeRecordTypes = new int[] {version == VERSION_1 ? IgmpMessage.V1_REPORT : IgmpMessage.V2_REPORT};
                state.changeRecordSources = new int[][] {NONE};
                scheduleChange(state, config.robustness() - 1, config.v2UnsolicitedReportIntervalNs(), nowNs);
            } else if (!wasEmpty && state.empty() && version == VERSION_2) {
                sendV1V2(IgmpMessage.V2_LEAVE, state.address, nowNs);
                cancelChange(state);
            }
            return;
        }
        if (oldMode == state.mode) {
            final int[] allow = state.mode == INCLUDE ? difference(state.sources, oldSources) : difference(oldSources, state.sources);
            final int[] block = state.mode == INCLUDE ? difference(oldSources, state.sources) : difference(state.sources, oldSources);
            final List<Integer> types = new ArrayList<>();
            final List<int[]> lists = new ArrayList<>();
            if (allow.length > 0) {
                types.add(IgmpMessage.ALLOW_NEW_SOURCES);
                lists.add(allow);
            }
            if (block.length > 0) {
                types.add(IgmpMessage.BLOCK_OLD_SOURCES);
                lists.add(block);
            }
            state.changeRecordTypes = types.stream().mapToInt(Integer::intValue).toArray();
            state.changeRecordSources = lists.toArray(new int[0][]);
        } else {
            state.changeRecordTypes = new int[] {state.mode == INCLUDE ? IgmpMessage.CHANGE_TO_INCLUDE : IgmpMessage.CHANGE_TO_EXCLUDE};
            state.changeRecordSources = new int[][] {state.sources};
        }
        sendChangeRecords(state, nowNs);
        scheduleChange(state, config.robustness() - 1, config.unsolicitedReportIntervalNs(), nowNs);
    }

    private void scheduleChange(Group state, int repeats, long intervalNs, long nowNs) {
        cancelChange(state);
        state.changeRepeats = repeats;
        if (repeats > 0) {
            state.changeTimer = timers.schedule(timerOwner, nowNs + randomDelay(intervalNs),
                ((long) state.slot << 2) | KIND_STATE_CHANGE);
        }
    }

    private void cancelChange(Group state) {
        if (state.changeTimer >= 0) {
            timers.cancel(state.changeTimer);
            state.changeTimer = -1;
        }
    }

    private void release(Group state) {
        if (state.responseTimer >= 0) {
            timers.cancel(state.responseTimer);
        }
        cancelChange(state);
        groups.remove(state.address);
        slots[state.slot] = null;
    }

    // ------------------------------------------------------------------------------------------- input

    /** {@link MulticastFilter}: the group's interface state lets {@code source} through (RFC 3376 §3.2). */
    @Override
    public boolean accepts(int group, int source, int protocol) {
        final Group state = groups.get(group);
        if (state == null || state.empty()) {
            return false;
        }
        if (protocol == IpProtocol.IGMP) {
            return true;
        }
        final boolean listed = Arrays.binarySearch(state.sources, source) >= 0;
        return state.mode == INCLUDE ? listed : !listed;
    }

    @Override
    public void onPacket(Ipv4Packet packet, MemorySegment segment, long offset, int length, long nowNs) {
        rx.wrap(segment, offset, length);
        final int reason = rx.check();
        if (reason != IgmpMessage.OK) {
            (reason == IgmpMessage.DROP_TOO_SHORT ? dropTooShort
                : reason == IgmpMessage.DROP_BAD_CHECKSUM ? dropBadChecksum : dropBadLength).incrementRelease();
            return;
        }
        switch (rx.type()) {
            case IgmpMessage.QUERY -> query(nowNs);
            case IgmpMessage.V1_REPORT, IgmpMessage.V2_REPORT -> otherHostReported(rx.group(), nowNs);
            case IgmpMessage.V3_REPORT, IgmpMessage.V2_LEAVE -> rxReports.incrementRelease();
            default -> dropOther.incrementRelease();
        }
    }

    private void query(long nowNs) {
        rxQueries.incrementRelease();
        final int group = rx.group();
        if (group != 0 && !Ipv4Address.isMulticast(group)) {
            dropBadLength.incrementRelease();
            return;
        }
        if (!rx.isV3Query()) {
            rxQueriesV1V2.incrementRelease();
            final boolean v1 = rx.maxResponseCode() == 0;
            if (v1) {
                v1Seen = true;
                v1QuerierUntilNs = nowNs + config.olderQuerierPresentTimeoutNs();
            } else {
                v2Seen = true;
                v2QuerierUntilNs = nowNs + config.olderQuerierPresentTimeoutNs();
            }
            // RFC 2236 §3 / RFC 1112: each group gets its own timer; v1 queries mean 10 s.
            final long maxNs = (v1 ? 100 : rx.maxResponseTenths()) * 100_000_000L;
            for (Group state : slots) {
                if (state != null && !state.empty() && (group == 0 || group == state.address)) {
                    scheduleGroupResponse(state, null, maxNs, nowNs, true);
                }
            }
            return;
        }
        final long maxNs = Math.max(1, rx.maxResponseTenths()) * 100_000_000L;
        if (version(nowNs) != VERSION_3) {
            // RFC 3376 §7.2.1: in compatibility mode v3 queries are answered in the older version.
            for (Group state : slots) {
                if (state != null && !state.empty() && (group == 0 || group == state.address)) {
                    scheduleGroupResponse(state, null, maxNs, nowNs, true);
                }
            }
            return;
        }
        final long delayNs = randomDelay(maxNs);
        // RFC 3376 §5.2 rule 1: a pending general response due sooner covers this query.
        if (generalTimer >= 0 && generalDeadlineNs - (nowNs + delayNs) <= 0) {
            return;
        }
        if (group == 0) {
            if (generalTimer >= 0) {
                timers.cancel(generalTimer);
            }
            generalDeadlineNs = nowNs + delayNs;
            generalTimer = timers.schedule(timerOwner, generalDeadlineNs, KIND_GENERAL_RESPONSE);
            return;
        }
        final Group state = groups.get(group);
        if (state == null || state.empty()) {
            return;
        }
        final int[] asked = new int[rx.querySourceCount()];
        for (int i = 0; i < asked.length; i++) {
            asked[i] = rx.querySource(i);
        }
        scheduleGroupResponse(state, asked.length == 0 ? null : sorted(asked), maxNs, nowNs, false);
    }

    /** RFC 3376 §5.2 rules 3-5 (and RFC 2236 §3 for older versions): one pending response per group. */
    private void scheduleGroupResponse(Group state, int[] asked, long maxNs, long nowNs, boolean older) {
        final long deadline = nowNs + randomDelay(maxNs);
        if (state.responseTimer < 0) {
            state.responseSources = asked;
            state.responseDeadlineNs = deadline;
            state.responseTimer = timers.schedule(timerOwner, deadline, ((long) state.slot << 2) | KIND_GROUP_RESPONSE);
            return;
        }
        if (older || asked == null || state.responseSources == null) {
            state.responseSources = null;
        } else {
            state.responseSources = union(state.responseSources, asked);
        }
        if (deadline - state.responseDeadlineNs < 0) {
            state.responseTimer = timers.reschedule(state.responseTimer, deadline);
            state.responseDeadlineNs = deadline;
        }
    }

    /** RFC 2236 §3: in v1/v2 mode, another host's report for a group cancels ours (report suppression). */
    private void otherHostReported(int group, long nowNs) {
        rxReports.incrementRelease();
        final Group state = groups.get(group);
        if (state != null && state.responseTimer >= 0 && version(nowNs) != VERSION_3) {
            timers.cancel(state.responseTimer);
            state.responseTimer = -1;
            suppressed.incrementRelease();
        }
    }

    // ------------------------------------------------------------------------------------------- timers

    private void onTimer(long value, long nowNs) {
        final int kind = (int) (value & 3);
        if (kind == KIND_GENERAL_RESPONSE) {
            generalTimer = -1;
            sendCurrentState(nowNs);
            return;
        }
        final Group state = slots[(int) (value >>> 2)];
        if (state == null) {
            return;
        }
        if (kind == KIND_GROUP_RESPONSE) {
            state.responseTimer = -1;
            respond(state, nowNs);
        } else {
            state.changeTimer = -1;
            final int version = version(nowNs);
            if (version == VERSION_3 && state.changeRecordTypes.length > 0
                && state.changeRecordTypes[0] != IgmpMessage.V1_REPORT && state.changeRecordTypes[0] != IgmpMessage.V2_REPORT) {
                sendChangeRecords(state, nowNs);
            } else if (version != VERSION_3 && !state.empty()) {
                sendV1V2(version == VERSION_1 ? IgmpMessage.V1_REPORT : IgmpMessage.V2_REPORT, state.address, nowNs);
            }
            if (--state.changeRepeats > 0) {
                state.changeTimer = timers.schedule(timerOwner, nowNs + randomDelay(version == VERSION_3
                    ? config.unsolicitedReportIntervalNs() : config.v2UnsolicitedReportIntervalNs()),
                    ((long) state.slot << 2) | KIND_STATE_CHANGE);
            } else if (state.empty() && state.memberships.isEmpty()) {
                release(state);
            }
        }
    }

    private void respond(Group state, long nowNs) {
        if (state.empty()) {
            return;
        }
        final int version = version(nowNs);
        if (version != VERSION_3) {
            sendV1V2(version == VERSION_1 ? IgmpMessage.V1_REPORT : IgmpMessage.V2_REPORT, state.address, nowNs);
            return;
        }
        if (state.responseSources == null) {
            sendRecords(new int[] {state.mode == INCLUDE ? IgmpMessage.MODE_IS_INCLUDE : IgmpMessage.MODE_IS_EXCLUDE},
                new int[] {state.address}, new int[][] {state.sources}, nowNs);
            return;
        }
        // Group-and-source-specific: report the asked sources we want (RFC 3376 §5.2, last paragraph).
        final int[] wanted = state.mode == INCLUDE ? intersection(state.sources, state.responseSources)
            : difference(state.responseSources, state.sources);
        if (wanted.length > 0) {
            sendRecords(new int[] {IgmpMessage.MODE_IS_INCLUDE}, new int[] {state.address}, new int[][] {wanted}, nowNs);
        }
    }

    /** The answer to a general query: the current state of every group, in as few reports as fit. */
    private void sendCurrentState(long nowNs) {
        final List<Group> members = new ArrayList<>();
        for (Group state : slots) {
            if (state != null && !state.empty()) {
                members.add(state);
            }
        }
        if (members.isEmpty()) {
            return;
        }
        final int[] types = new int[members.size()];
        final int[] addresses = new int[members.size()];
        final int[][] lists = new int[members.size()][];
        for (int i = 0; i < members.size(); i++) {
            final Group state = members.get(i);
            types[i] = state.mode == INCLUDE ? IgmpMessage.MODE_IS_INCLUDE : IgmpMessage.MODE_IS_EXCLUDE;
            addresses[i] = state.address;
            lists[i] = state.sources;
        }
        sendRecords(types, addresses, lists, nowNs);
    }

    // ------------------------------------------------------------------------------------------- output

    private void sendChangeRecords(Group state, long nowNs) {
        if (state.changeRecordTypes.length == 0) {
            return;
        }
        final int[] addresses = new int[state.changeRecordTypes.length];
        Arrays.fill(addresses, state.address);
        sendRecords(state.changeRecordTypes, addresses, state.changeRecordSources, nowNs);
    }

    /** Sends v3 reports to 224.0.0.22 carrying the records, split so that each fits the MTU. */
    private void sendRecords(int[] types, int[] addresses, int[][] sources, long nowNs) {
        final int limit = ipv4.mtu() - 24;
        int first = 0;
        while (first < types.length) {
            int length = IgmpMessage.FIRST_RECORD_OFFSET;
            int last = first;
            while (last < types.length && length + 8 + 4 * sources[last].length <= limit) {
                length += 8 + 4 * sources[last].length;
                last++;
            }
            if (last == first) {
                last = first + 1; // a record with more sources than fit: truncated below to what fits
                length = Math.min(limit, IgmpMessage.FIRST_RECORD_OFFSET + 8 + 4 * sources[first].length) & ~3;
            }
            if (ipv4.beginWithRouterAlert(Ipv4Address.ALL_IGMPV3_ROUTERS, IpProtocol.IGMP, length, 1, nowNs) == Ipv4Layer.OK) {
                tx.wrap(ipv4.segment(), ipv4.payloadOffset(), length).startReport();
                int at = IgmpMessage.FIRST_RECORD_OFFSET;
                for (int i = first; i < last; i++) {
                    final int room = (length - at - 8) / 4;
                    final int[] list = sources[i].length <= room ? sources[i] : Arrays.copyOf(sources[i], room);
                    at = tx.record(at, types[i], addresses[i], list);
                }
                tx.finishReport(length);
                ipv4.commit();
                txReportsV3.incrementRelease();
            }
            first = last;
        }
    }

    private void sendV1V2(int type, int group, long nowNs) {
        final int destination = type == IgmpMessage.V2_LEAVE ? Ipv4Address.ALL_ROUTERS : group;
        if (ipv4.beginWithRouterAlert(destination, IpProtocol.IGMP, IgmpMessage.MIN_LENGTH, 1, nowNs) != Ipv4Layer.OK) {
            return;
        }
        tx.wrap(ipv4.segment(), ipv4.payloadOffset(), IgmpMessage.MIN_LENGTH).writeV2(type, 0, group);
        ipv4.commit();
        (type == IgmpMessage.V2_LEAVE ? txLeaves : type == IgmpMessage.V1_REPORT ? txReportsV1 : txReportsV2)
            .incrementRelease();
    }

    private long randomDelay(long maxNs) {
        return maxNs <= 1 ? 0 : random.nextLong(maxNs);
    }

    // ------------------------------------------------------------------------------------------- sets

    private static int[] sorted(int[] values) {
        final int[] copy = values.clone();
        Arrays.sort(copy);
        return Arrays.stream(copy).distinct().toArray();
    }

    private static int[] union(int[] a, int[] b) {
        return sorted(java.util.stream.IntStream.concat(Arrays.stream(a), Arrays.stream(b)).toArray());
    }

    private static int[] intersection(int[] a, int[] b) {
        return Arrays.stream(a).filter(x -> Arrays.binarySearch(b, x) >= 0).toArray();
    }

    private static int[] difference(int[] a, int[] b) {
        return Arrays.stream(a).filter(x -> Arrays.binarySearch(b, x) < 0).toArray();
    }
}
