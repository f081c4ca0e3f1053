package dev.tern.ipv4.wire;

import dev.tern.core.memory.Flyweight;

import java.lang.foreign.MemorySegment;

/**
 * The options of a received IPv4 header (RFC 791 §3.1 "Options"), validated in place.
 *
 * <p>Wrapped over the whole header (the window is {@code [0, IHL x 4)}, options from byte 20), after
 * {@link Ipv4Header#check} passed. {@link #check()} walks the option list once and returns {@link #OK} or the
 * reason to drop the datagram; on a drop, {@link #problemPointer()} is the octet (counted from the first byte of the
 * IP header) an ICMP Parameter Problem names (RFC 792, RFC 1122 §3.2.2.5). What is checked:
 * <ul>
 *   <li>every option but End of List and No Operation has a length octet inside the header, at least 2, and does
 *       not run past the header ({@link #DROP_BAD_LENGTH}, {@link #DROP_PAST_HEADER});</li>
 *   <li>Record Route and the source routes: length at least 3, pointer at least 4 and at the start of an address
 *       slot that fits in the option, unless the option is full (pointer past its length) ({@link #DROP_BAD_POINTER});</li>
 *   <li>Timestamp: length at least 4, a known flag (0, 1 or 3; {@link #DROP_BAD_TIMESTAMP_FLAG}), pointer at least
 *       5 and at the start of a slot (4 or 8 bytes by flag) that fits, unless the option is full;</li>
 *   <li>Router Alert: length exactly 4 (RFC 2113 §2.1);</li>
 *   <li>Record Route, Timestamp and a source route (loose or strict: at most one of either) appear at most once
 *       (RFC 791: these "may appear at most once"; {@link #DROP_DUPLICATE}).</li>
 * </ul>
 * Options this class does not know (security, stream identifier, experimental) are skipped by their length, as RFC
 * 1122 §3.2.1.8 asks ("silently ignore the others"). What the layer does with a valid option is its policy, not this
 * class's: {@link #sourceRouteOffset()} tells it whether a source route is present.
 *
 * <p>One instance per shard, re-wrapped per datagram; valid while the wrapped frame is.
 */
public final class Ipv4Options extends Flyweight {
    public static final int END_OF_LIST = 0;
    public static final int NO_OPERATION = 1;
    public static final int RECORD_ROUTE = 7;
    public static final int TIMESTAMP = 68;
    public static final int LOOSE_SOURCE_ROUTE = 131;
    public static final int STRICT_SOURCE_ROUTE = 137;
    public static final int ROUTER_ALERT = 148;

    public static final int OK = 0;
    /** A length octet below the option's minimum (0 or 1 for any option, or too small for its type). */
    public static final int DROP_BAD_LENGTH = 1;
    /** The option, or its length octet, does not fit in the header. */
    public static final int DROP_PAST_HEADER = 2;
    /** A route or timestamp pointer below its minimum, or not at the start of a slot that fits. */
    public static final int DROP_BAD_POINTER = 3;
    /** Record Route, Timestamp or a source route a second time. */
    public static final int DROP_DUPLICATE = 4;
    /** A timestamp flag other than 0 (timestamps), 1 (address and timestamp) or 3 (prespecified addresses). */
    public static final int DROP_BAD_TIMESTAMP_FLAG = 5;
    /** Names of the drop reasons above, indexed by code, for counters. */
    public static final String[] DROP_NAMES = {null, "option_bad_length", "option_past_header", "option_bad_pointer",
        "option_duplicate", "option_bad_timestamp_flag"};

    private static final int SEEN_RECORD_ROUTE = 1;
    private static final int SEEN_TIMESTAMP = 2;
    private static final int SEEN_SOURCE_ROUTE = 4;
    /** First legal pointer value of the route options and of Timestamp (RFC 791: "the smallest legal value is 4/5"). */
    private static final int ROUTE_MIN_POINTER = 4;
    private static final int TIMESTAMP_MIN_POINTER = 5;

    private int problemPointer;
    private int sourceRouteOffset;

    /** Wraps the IP header at {@code headerBase}, {@code headerLength} (IHL x 4) bytes long. */
    public Ipv4Options wrap(MemorySegment segment, long headerBase, int headerLength) {
        wrapWindow(segment, headerBase, headerLength);
        return this;
    }

    /** {@link #OK} when every option is well formed; else the drop reason, with {@link #problemPointer()} set. */
    public int check() {
        problemPointer = 0;
        sourceRouteOffset = 0;
        int seen = 0;
        int at = Ipv4Header.MIN_LENGTH;
        while (at < limit) {
            final int type = u8(at);
            if (type == END_OF_LIST) {
                return OK; // what follows is padding
            }
            if (type == NO_OPERATION) {
                at++;
                continue;
            }
            if (at + 1 >= limit) {
                return problem(DROP_PAST_HEADER, at); // the length octet itself is missing
            }
            final int length = u8(at + 1);
            if (length < 2) {
                // A length of 0 or 1 would never advance, or point inside its own type-length pair.
                return problem(DROP_BAD_LENGTH, at + 1);
            }
            if (at + length > limit) {
                return problem(DROP_PAST_HEADER, at + 1);
            }
            final int reason;
            switch (type) {
                case RECORD_ROUTE -> {
                    reason = (seen & SEEN_RECORD_ROUTE) != 0 ? problem(DROP_DUPLICATE, at) : route(at, length);
                    seen |= SEEN_RECORD_ROUTE;
                }
                case LOOSE_SOURCE_ROUTE, STRICT_SOURCE_ROUTE -> {
                    // RFC 1812 §5.2.4.1 also treats a second source route of either kind as an error.
                    reason = (seen & SEEN_SOURCE_ROUTE) != 0 ? problem(DROP_DUPLICATE, at) : route(at, length);
                    seen |= SEEN_SOURCE_ROUTE;
                    sourceRouteOffset = at;
                }
                case TIMESTAMP -> {
                    reason = (seen & SEEN_TIMESTAMP) != 0 ? problem(DROP_DUPLICATE, at) : timestamp(at, length);
                    seen |= SEEN_TIMESTAMP;
                }
                case ROUTER_ALERT -> reason = length != 4 ? problem(DROP_BAD_LENGTH, at + 1) : OK;
                default -> reason = OK;
            }
            if (reason != OK) {
                return reason;
            }
            at += length;
        }
        return OK;
    }

    /**
     * Record Route, Loose or Strict Source Route (RFC 791): type, length, pointer, then 4-byte addresses. The pointer
     * is relative to the option's type octet; past the length, the route is full (recorded) or complete (source
     * routes), which is legal.
     */
    private int route(int at, int length) {
        if (length < 3) {
            return problem(DROP_BAD_LENGTH, at + 1);
        }
        final int pointer = u8(at + 2);
        if (pointer < ROUTE_MIN_POINTER) {
            return problem(DROP_BAD_POINTER, at + 2);
        }
        if (pointer <= length && (((pointer - ROUTE_MIN_POINTER) & 3) != 0 || pointer + 3 > length)) {
            return problem(DROP_BAD_POINTER, at + 2); // mid-address, or an address slot cut by the option's end
        }
        return OK;
    }

    /**
     * Timestamp (RFC 791): type, length, pointer, overflow (4 bits) and flag (4 bits), then 4-byte timestamps
     * (flag 0) or 8-byte address-timestamp pairs (flags 1 and 3).
     */
    private int timestamp(int at, int length) {
        if (length < 4) {
            return problem(DROP_BAD_LENGTH, at + 1);
        }
        final int flag = u8(at + 3) & 0xF;
        if (flag != 0 && flag != 1 && flag != 3) {
            return problem(DROP_BAD_TIMESTAMP_FLAG, at + 3);
        }
        final int pointer = u8(at + 2);
        if (pointer < TIMESTAMP_MIN_POINTER) {
            return problem(DROP_BAD_POINTER, at + 2);
        }
        final int slot = flag == 0 ? 4 : 8;
        if (pointer <= length && ((pointer - TIMESTAMP_MIN_POINTER) % slot != 0 || pointer + slot - 1 > length)) {
            return problem(DROP_BAD_POINTER, at + 2);
        }
        return OK;
    }

    private int problem(int reason, int octet) {
        problemPointer = octet;
        return reason;
    }

    /** After a failed {@link #check()}: the offending octet, counted from the first byte of the IP header. */
    public int problemPointer() {
        return problemPointer;
    }

    /** After {@link #check()}: where the loose or strict source route option starts in the header; 0 when none. */
    public int sourceRouteOffset() {
        return sourceRouteOffset;
    }

    public static String dropName(int reason) {
        return reason > 0 && reason < DROP_NAMES.length ? DROP_NAMES[reason] : reason == OK ? "ok" : "unknown";
    }
}
