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
 * Router discovery for a host (RFC 4861 §6.3): solicits routers when the stack starts, and from their
 * advertisements keeps the default router list and the on-link prefixes with their lifetimes (§6.3.4, §5.2's
 * conceptual data structures), the link's MTU option and the routers' link-layer addresses. An off-link destination
 * goes to the first default router whose lifetime runs; without one it is not sent (counted).
 *
 * <p>An advertisement is validated as §6.1.2 requires: from a link-local address, hop limit 255, code 0, at least
 * 16 bytes, options of non-zero length. When asked ({@link Ipv6Config#slaac()}), an address is formed from each
 * prefix with the autonomous flag and a length of 64 (RFC 4862 §5.5.3: the prefix and the modified EUI-64
 * identifier), checked by DAD before use, and kept for its valid lifetime, which an unauthenticated advertisement
 * may not cut below two hours (§5.5.3 e); preferred lifetimes are not told apart. Solicitations (§6.3.7): up to 3,
 * 4 s apart, after a random delay of up to 1 s, stopped by the first valid advertisement.
 *
 * <p>Owned by the shard thread; not thread-safe.
 */
final class RouterDiscovery {
    private static final int MAX_ROUTERS = 4;
    private static final int MAX_PREFIXES = 8;
    private static final int MAX_SOLICITATIONS = 3;
    private static final long SOLICITATION_INTERVAL_NS = 4_000_000_000L;
    private static final long MAX_SOLICITATION_DELAY_NS = 1_000_000_000L;
    private static final int RA_LENGTH = 16;
    private static final int OPTION_PREFIX = 3;
    private static final int OPTION_MTU = 5;
    private static final int FLAG_ON_LINK = 0x80;
    private static final int FLAG_AUTONOMOUS = 0x40;
    /** RFC 4862 §5.5.3 e): two hours. */
    private static final long TWO_HOURS_NS = 7_200_000_000_000L;
    private static final long INFINITE = 0xffff_ffffL;
    /** An infinite lifetime, as a span that deadline arithmetic cannot overflow. */
    private static final long FOREVER_NS = 1L << 62;

    private final Ipv6Layer ipv6;
    private final Ipv6Addresses addresses;
    private final Ipv6NeighbourCache neighbours;
    private final Ipv6Counters counters;
    private final Timers timers;
    private final int timerOwner;
    private final SplittableRandom random;
    private final long mac;
    private final Icmpv6Header tx = new Icmpv6Header();
    private final NeighbourDiscovery discovery;
    private final boolean slaac;
    private final int dadTransmits;
    /** Per address row: when a SLAAC address stops being valid, and its timer. */
    private final long[] validUntilNs;
    private final long[] expiryTimer;

    private final long[] routerHigh = new long[MAX_ROUTERS];
    private final long[] routerLow = new long[MAX_ROUTERS];
    private final long[] routerExpiresNs = new long[MAX_ROUTERS];
    private int routerCount;
    private final long[] prefixHigh = new long[MAX_PREFIXES];
    private final long[] prefixLow = new long[MAX_PREFIXES];
    private final int[] prefixLength = new int[MAX_PREFIXES];
    private final long[] prefixExpiresNs = new long[MAX_PREFIXES];
    private int prefixCount;
    private int solicitationsLeft;
    private int linkMtu;

    RouterDiscovery(Ipv6Layer ipv6, Ipv6Addresses addresses, Ipv6NeighbourCache neighbours, NeighbourDiscovery discovery,
                    Timers timers, long mac, Ipv6Config config, int mtu, Ipv6Counters counters, boolean solicit) {
        this.discovery = discovery;
        this.slaac = config.slaac();
        this.dadTransmits = config.dadTransmits();
        this.validUntilNs = new long[addresses.capacity()];
        this.expiryTimer = new long[addresses.capacity()];
        java.util.Arrays.fill(expiryTimer, -1);
        this.ipv6 = ipv6;
        this.addresses = addresses;
        this.neighbours = neighbours;
        this.counters = counters;
        this.timers = timers;
        this.mac = mac;
        this.timerOwner = timers.register(this::onTimer);
        this.random = new SplittableRandom(mac * 0xBF58_476D_1CE4_E5B9L);
        this.solicitationsLeft = solicit ? MAX_SOLICITATIONS : 0;
        this.linkMtu = mtu;
    }

    void start(long nowNs) {
        if (solicitationsLeft > 0) {
            timers.schedule(timerOwner, nowNs + random.nextLong(MAX_SOLICITATION_DELAY_NS), 0);
        }
    }

    /** The link's MTU: the interface's, or less when a router's MTU option says so (§6.3.4). */
    int linkMtu() {
        return linkMtu;
    }

    /** True when ({@code h}, {@code l}) is on a prefix a router advertised as on-link, still valid. */
    boolean onLink(long h, long l, long nowNs) {
        for (int i = 0; i < prefixCount; i++) {
            if (prefixExpiresNs[i] - nowNs > 0
                && Ipv6Address.samePrefix(prefixHigh[i], prefixLow[i], h, l, prefixLength[i])) {
                return true;
            }
        }
        return false;
    }

    /** The default router to use now, or -1 (§6.3.6: the first whose lifetime runs). */
    int defaultRouter(long nowNs) {
        for (int i = 0; i < routerCount; i++) {
            if (routerExpiresNs[i] - nowNs > 0) {
                return i;
            }
        }
        return -1;
    }

    long routerHigh(int i) {
        return routerHigh[i];
    }

    long routerLow(int i) {
        return routerLow[i];
    }

    /** A router advertisement (§6.3.4). */
    void onAdvertisement(Ipv6Packet packet, Icmpv6Header rx, MemorySegment segment, long offset, int length,
                         long nowNs) {
        counters.ndRxRouterAdvertisements.incrementRelease();
        if (packet.hopLimit != 255) {
            counters.ndDropHopLimit.incrementRelease();
            return;
        }
        if (!Ipv6Address.isLinkLocal(packet.sourceHigh) || rx.code() != 0 || length < RA_LENGTH
            || NdOptions.linkLayerAddress(segment, offset + RA_LENGTH, offset + length,
                Icmpv6Header.OPTION_SOURCE_LINK_LAYER) == NdOptions.INVALID) {
            counters.ndDropInvalid.incrementRelease();
            return;
        }
        solicitationsLeft = 0;
        final long lifetimeNs = BigEndian.u16(segment, offset + 6) * 1_000_000_000L;
        router(packet.sourceHigh, packet.sourceLow, lifetimeNs, nowNs);
        long at = offset + RA_LENGTH;
        final long end = offset + length;
        while (at < end) {
            final int type = BigEndian.u8(segment, at);
            final int units = BigEndian.u8(segment, at + 1);
            if (type == Icmpv6Header.OPTION_SOURCE_LINK_LAYER && units == 1) {
                neighbours.learnFromSolicitation(packet.sourceHigh, packet.sourceLow, BigEndian.u48(segment, at + 2),
                    nowNs);
            } else if (type == OPTION_MTU && units == 1) {
                final long mtu = BigEndian.i32(segment, at + 4) & 0xffff_ffffL;
                if (mtu >= 1280 && mtu <= ipv6.ethernet().mtu()) {
                    linkMtu = (int) mtu; // §6.3.4: never above the link's own
                }
            } else if (type == OPTION_PREFIX && units == 4) {
                prefix(segment, at, nowNs);
            }
            at += units * 8L;
        }
    }

    /** §6.3.4: a router with a lifetime is (re)entered, one with 0 is removed. */
    private void router(long h, long l, long lifetimeNs, long nowNs) {
        int found = -1;
        for (int i = 0; i < routerCount; i++) {
            if (routerHigh[i] == h && routerLow[i] == l) {
                found = i;
            }
        }
        if (lifetimeNs == 0) {
            if (found >= 0) {
                routerCount--;
                routerHigh[found] = routerHigh[routerCount];
                routerLow[found] = routerLow[routerCount];
                routerExpiresNs[found] = routerExpiresNs[routerCount];
            }
            return;
        }
        if (found < 0) {
            if (routerCount == MAX_ROUTERS) {
                counters.ndRoutersFull.incrementRelease();
                return;
            }
            found = routerCount++;
            routerHigh[found] = h;
            routerLow[found] = l;
        }
        routerExpiresNs[found] = nowNs + lifetimeNs;
    }

    /** A prefix information option (§6.3.4, RFC 4861 §4.6.2): an on-link prefix kept for its valid lifetime. */
    private void prefix(MemorySegment segment, long at, long nowNs) {
        final int length = BigEndian.u8(segment, at + 2);
        final int flags = BigEndian.u8(segment, at + 3);
        final long valid = BigEndian.i32(segment, at + 4) & 0xffff_ffffL;
        final long h = BigEndian.i64(segment, at + 16);
        final long l = BigEndian.i64(segment, at + 24);
        if (length > 128 || Ipv6Address.isLinkLocal(h)) {
            return; // §6.3.4: the link-local prefix is ignored
        }
        final long preferred = BigEndian.i32(segment, at + 8) & 0xffff_ffffL;
        if (slaac && (flags & FLAG_AUTONOMOUS) != 0 && length == 64 && preferred <= valid) {
            autoconfigure(h, valid, nowNs);
        }
        if ((flags & FLAG_ON_LINK) == 0) {
            return;
        }
        final long expires = nowNs + (valid == INFINITE ? FOREVER_NS : valid * 1_000_000_000L);
        for (int i = 0; i < prefixCount; i++) {
            if (prefixLength[i] == length && Ipv6Address.samePrefix(prefixHigh[i], prefixLow[i], h, l, length)) {
                prefixExpiresNs[i] = valid == 0 ? nowNs : expires;
                return;
            }
        }
        if (valid == 0) {
            return;
        }
        if (prefixCount == MAX_PREFIXES) {
            counters.ndPrefixesFull.incrementRelease();
            return;
        }
        prefixHigh[prefixCount] = h;
        prefixLow[prefixCount] = l;
        prefixLength[prefixCount] = length;
        prefixExpiresNs[prefixCount] = expires;
        prefixCount++;
    }

    /** RFC 4862 §5.5.3 d), e): a new address from the prefix, or the valid lifetime of the one we have. */
    private void autoconfigure(long prefixHigh, long valid, long nowNs) {
        final long identifier = Ipv6Address.interfaceIdentifier(mac);
        int row = addresses.indexOf(prefixHigh, identifier);
        final long validNs = valid == INFINITE ? FOREVER_NS : valid * 1_000_000_000L;
        if (row >= 0 && addresses.autoconfigured(row) && addresses.state(row) != Ipv6Addresses.EXPIRED) {
            final long remainingNs = validUntilNs[row] - nowNs;
            if (validNs > TWO_HOURS_NS || validNs > remainingNs) {
                lifetime(row, validNs, nowNs);
            } else if (remainingNs > TWO_HOURS_NS) {
                lifetime(row, TWO_HOURS_NS, nowNs);
            }
            return;
        }
        if (row >= 0 && addresses.state(row) != Ipv6Addresses.EXPIRED || valid == 0) {
            return; // configured statically already, or nothing to keep
        }
        row = addresses.addAutoconfigured(prefixHigh, identifier, 64, dadTransmits);
        if (row < 0) {
            counters.ndSlaacFull.incrementRelease();
            return;
        }
        counters.ndSlaacAddresses.incrementRelease();
        lifetime(row, validNs, nowNs);
        discovery.addressAdded(row, nowNs);
    }

    private void lifetime(int row, long validNs, long nowNs) {
        validUntilNs[row] = nowNs + validNs;
        if (expiryTimer[row] >= 0) {
            timers.cancel(expiryTimer[row]);
        }
        expiryTimer[row] = validNs == FOREVER_NS ? -1 : timers.schedule(timerOwner, validUntilNs[row], 1 + row);
    }

    private void onTimer(long value, long nowNs) {
        if (value > 0) {
            final int row = (int) value - 1;
            expiryTimer[row] = -1;
            discovery.addressExpired(row, nowNs);
            return;
        }
        if (solicitationsLeft == 0) {
            return;
        }
        solicitationsLeft--;
        solicit(nowNs);
        if (solicitationsLeft > 0) {
            timers.schedule(timerOwner, nowNs + SOLICITATION_INTERVAL_NS, 0);
        }
    }

    /** §4.1, §6.3.7: to all routers, with our MAC unless sent from the unspecified address. */
    private void solicit(long nowNs) {
        final boolean fromLinkLocal = addresses.state(0) == Ipv6Addresses.PREFERRED;
        final int length = fromLinkLocal ? 16 : 8;
        if (ipv6.beginFrom(fromLinkLocal ? addresses.high(0) : 0, fromLinkLocal ? addresses.low(0) : 0,
            Ipv6Address.ALL_ROUTERS.high(), Ipv6Address.ALL_ROUTERS.low(), NextHeader.ICMPV6, length, 255, 0, nowNs)
            != Ipv6Layer.OK) {
            return;
        }
        final MemorySegment out = ipv6.segment();
        final long at = ipv6.payloadOffset();
        tx.wrap(out, at, length).type(Icmpv6Header.ROUTER_SOLICITATION).code(0).checksum(0).word(0);
        if (fromLinkLocal) {
            BigEndian.u8(out, at + 8, Icmpv6Header.OPTION_SOURCE_LINK_LAYER);
            BigEndian.u8(out, at + 9, 1);
            BigEndian.u48(out, at + 10, mac);
        }
        tx.checksum(InternetChecksum.finish(InternetChecksum.add(ipv6.pseudoHeaderSum(), out, at, length)));
        ipv6.commit();
        counters.ndTxRouterSolicitations.incrementRelease();
    }
}
