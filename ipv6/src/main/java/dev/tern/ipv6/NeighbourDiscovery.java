package dev.tern.ipv6;

import dev.tern.core.checksum.InternetChecksum;
import dev.tern.core.memory.BigEndian;
import dev.tern.core.net.Ipv6Address;
import dev.tern.core.time.EarliestTimer;
import dev.tern.core.time.Timers;
import dev.tern.ethernet.EthernetLayer;
import dev.tern.ipv6.wire.Icmpv6Header;
import dev.tern.ipv6.wire.NextHeader;

import java.lang.foreign.MemorySegment;

/**
 * Neighbour discovery for a host (RFC 4861): answers solicitations for our addresses, learns link-layer addresses
 * from solicitations and advertisements into the {@link Ipv6NeighbourCache}, sends the solicitations the cache asks
 * for, and runs duplicate address detection on every address before it is used (RFC 4862 §5.4).
 *
 * <p>Every message is validated as §7.1 requires before it changes anything: hop limit 255 (it cannot have come
 * from off the link), code 0, long enough, a unicast target, options of non-zero length within the message, and for
 * a solicitation from the unspecified address (DAD's) a solicited-node destination and no source link-layer
 * address; an advertisement to a multicast group must not claim to be solicited. Fragmented ND messages never
 * reach here (RFC 6980): fragments are not reassembled yet, and will be refused for ND when they are.
 *
 * <p>Router discovery, SLAAC and redirects are not built yet: router messages and redirects are counted and ignored,
 * which is what RFC 4861 §8.1 asks of a host by default for redirects it cannot validate.
 *
 * <p>Owned by the shard thread; not thread-safe.
 */
final class NeighbourDiscovery implements Ipv6NeighbourCache.Solicitor {
    /** RFC 4861 §4.6.1: a link-layer address option for Ethernet is 8 bytes, length 1. */
    private static final int LINK_LAYER_OPTION_LENGTH = 8;
    private static final int ND_HOP_LIMIT = 255;
    private static final long TIMER_NEIGHBOURS = 0;
    private static final long TIMER_DAD = 1;

    private final Ipv6Layer ipv6;
    private final EthernetLayer ethernet;
    private final Timers timers;
    private final int timerOwner;
    private final Ipv6Config config;
    private final Ipv6Addresses addresses;
    private final Ipv6Counters counters;
    private final Ipv6NeighbourCache neighbours;
    private final MldListener mld;
    /** Another stack on the link speaks for our addresses (Ipv6Layer's constructor): DAD and answers are its own. */
    private final boolean silent;
    private boolean dadTimerArmed;
    private final Icmpv6Header tx = new Icmpv6Header();
    private final EarliestTimer neighbourTimer;
    /** The link-layer address option of the message being validated, or -1. */
    private long optionMac;
    private boolean optionPresent;

    NeighbourDiscovery(Ipv6Layer ipv6, EthernetLayer ethernet, Timers timers, Ipv6Config config,
                       Ipv6Addresses addresses, Ipv6Counters counters, MldListener mld, boolean silent) {
        this.mld = mld;
        this.silent = silent;
        this.ipv6 = ipv6;
        this.ethernet = ethernet;
        this.timers = timers;
        this.config = config;
        this.addresses = addresses;
        this.counters = counters;
        this.neighbours = new Ipv6NeighbourCache(config, this, ethernet, counters);
        this.timerOwner = timers.register(this::onTimer);
        this.neighbourTimer = new EarliestTimer(timers, timerOwner, TIMER_NEIGHBOURS);
    }

    Ipv6NeighbourCache neighbours() {
        return neighbours;
    }

    /**
     * Listens to all-nodes and each address's solicited-node group (RFC 4861 §7.2.1), has the link take each address
     * (one that chooses frames by address), and starts DAD.
     */
    void start(long nowNs) {
        ethernet.addMulticast(Ipv6Address.multicastMac(Ipv6Address.ALL_NODES.low()));
        for (int i = 0; i < addresses.count(); i++) {
            ethernet.addIpv6Address(addresses.high(i), addresses.low(i));
            ethernet.addMulticast(Ipv6Address.multicastMac(Ipv6Address.solicitedNodeLow(addresses.low(i))));
        }
        mld.start(nowNs);
        dadStep(nowNs);
    }

    // ------------------------------------------------------------------------------------------- duplicates

    /**
     * Sends the next DAD solicitation of each tentative address (RFC 4862 §5.4.2: from the unspecified address, to
     * the solicited-node group of the address, without a source link-layer option); an address whose solicitations
     * are all out and went a RetransTimer unanswered is ours (§5.4.5's converse).
     */
    private void dadStep(long nowNs) {
        dadTimerArmed = false;
        boolean waiting = false;
        for (int i = 0; i < addresses.count(); i++) {
            if (addresses.state(i) != Ipv6Addresses.TENTATIVE) {
                continue;
            }
            if (addresses.dadLeft[i] == 0) {
                addresses.state(i, Ipv6Addresses.PREFERRED);
                counters.ndDadCompleted.incrementRelease();
                continue;
            }
            addresses.dadLeft[i]--;
            sendDadSolicitation(i, nowNs);
            waiting = true;
        }
        if (waiting) {
            timers.schedule(timerOwner, nowNs + config.retransmitNs(), TIMER_DAD);
            dadTimerArmed = true;
        }
    }

    /**
     * A new address (SLAAC's, RFC 4862 §5.5.3): its solicited-node group joined and reported, and DAD for it begun at
     * once, its first solicitation now and the rest with the others' (§5.4.2).
     */
    void addressAdded(int address, long nowNs) {
        ethernet.addIpv6Address(addresses.high(address), addresses.low(address));
        ethernet.addMulticast(Ipv6Address.multicastMac(Ipv6Address.solicitedNodeLow(addresses.low(address))));
        mld.addressAdded(addresses.low(address), nowNs);
        if (addresses.state(address) != Ipv6Addresses.TENTATIVE) {
            return;
        }
        addresses.dadLeft[address]--;
        sendDadSolicitation(address, nowNs);
        if (!dadTimerArmed) {
            timers.schedule(timerOwner, nowNs + config.retransmitNs(), TIMER_DAD);
            dadTimerArmed = true;
        }
    }

    /**
     * A DAD solicitation for {@code address} (§5.4.2: from the unspecified address, to its solicited-node group, no
     * link-layer option); none when another stack speaks for our addresses, whose own solicitation is on the wire.
     */
    private void sendDadSolicitation(int address, long nowNs) {
        if (!silent) {
            sendSolicitation(0, 0, Ipv6Address.LINK_SCOPE_MULTICAST_HIGH,
                Ipv6Address.solicitedNodeLow(addresses.low(address)), addresses.high(address), addresses.low(address),
                false, nowNs);
        }
    }

    /** An address whose valid lifetime ran out (RFC 4862 §5.5.4): its group left. */
    void addressExpired(int address, long nowNs) {
        if (addresses.state(address) == Ipv6Addresses.EXPIRED) {
            return;
        }
        final boolean listened = addresses.state(address) != Ipv6Addresses.DUPLICATE;
        addresses.expire(address);
        if (listened) {
            ethernet.removeIpv6Address(addresses.high(address), addresses.low(address));
            ethernet.removeMulticast(Ipv6Address.multicastMac(Ipv6Address.solicitedNodeLow(addresses.low(address))));
            mld.addressLost(addresses.low(address), nowNs);
        }
    }

    /** §5.4.5: another node holds a tentative address of ours: it is never used. */
    private void duplicate(int address, long nowNs) {
        addresses.state(address, Ipv6Addresses.DUPLICATE);
        counters.ndDadDuplicates.incrementRelease();
        ethernet.removeIpv6Address(addresses.high(address), addresses.low(address));
        ethernet.removeMulticast(Ipv6Address.multicastMac(Ipv6Address.solicitedNodeLow(addresses.low(address))));
        mld.addressLost(addresses.low(address), nowNs);
    }

    // ------------------------------------------------------------------------------------------- receive

    /** A neighbour solicitation (RFC 4861 §7.2.3; RFC 4862 §5.4.3 for a tentative target). */
    void onSolicitation(Ipv6Packet packet, Icmpv6Header rx, MemorySegment segment, long offset, int length,
                        long nowNs) {
        counters.ndRxSolicitations.incrementRelease();
        final boolean unspecifiedSource = packet.sourceHigh == 0 && packet.sourceLow == 0;
        if (!validNdMessage(packet, rx, segment, offset, length, Icmpv6Header.OPTION_SOURCE_LINK_LAYER)) {
            return;
        }
        if (unspecifiedSource && (optionPresent || packet.destinationHigh != Ipv6Address.LINK_SCOPE_MULTICAST_HIGH
            || (packet.destinationLow & 0xffff_ffff_ff00_0000L) != Ipv6Address.solicitedNodeLow(0))) {
            counters.ndDropInvalid.incrementRelease();
            return;
        }
        final int target = addresses.indexOf(rx.targetHigh(), rx.targetLow());
        if (target < 0) {
            return; // §7.2.3: not one of ours; silently discarded
        }
        if (addresses.state(target) == Ipv6Addresses.TENTATIVE) {
            if (unspecifiedSource) {
                duplicate(target, nowNs); // another node is checking the same address at the same time
            }
            return;
        }
        if (addresses.state(target) == Ipv6Addresses.DUPLICATE || addresses.state(target) == Ipv6Addresses.EXPIRED) {
            return;
        }
        if (unspecifiedSource) {
            if (silent) {
                return; // the stack that speaks for the address answers
            }
            // §7.2.4: answer DAD to all nodes, not solicited, overriding.
            sendAdvertisement(Ipv6Address.LINK_SCOPE_MULTICAST_HIGH, Ipv6Address.ALL_NODES.low(),
                addresses.high(target), addresses.low(target), Icmpv6Header.FLAG_OVERRIDE, nowNs);
            return;
        }
        if (optionPresent) {
            neighbours.learnFromSolicitation(packet.sourceHigh, packet.sourceLow, optionMac, nowNs);
        }
        if (silent) {
            return;
        }
        sendAdvertisement(packet.sourceHigh, packet.sourceLow, addresses.high(target), addresses.low(target),
            Icmpv6Header.FLAG_SOLICITED | Icmpv6Header.FLAG_OVERRIDE, nowNs);
    }

    /** A neighbour advertisement (RFC 4861 §7.2.5; RFC 4862 §5.4.4 for a tentative target). */
    void onAdvertisement(Ipv6Packet packet, Icmpv6Header rx, MemorySegment segment, long offset, int length,
                         long nowNs) {
        counters.ndRxAdvertisements.incrementRelease();
        final int flags = rx.word();
        if (!validNdMessage(packet, rx, segment, offset, length, Icmpv6Header.OPTION_TARGET_LINK_LAYER)) {
            return;
        }
        if (packet.multicastDestination && (flags & Icmpv6Header.FLAG_SOLICITED) != 0) {
            counters.ndDropInvalid.incrementRelease();
            return;
        }
        final long th = rx.targetHigh();
        final long tl = rx.targetLow();
        final int target = addresses.indexOf(th, tl);
        if (target >= 0) {
            if (addresses.state(target) == Ipv6Addresses.TENTATIVE) {
                duplicate(target, nowNs);
            }
            return; // an advertisement for an address we use: a conflict; ours stands
        }
        neighbours.learnFromAdvertisement(th, tl, optionPresent ? optionMac : -1,
            (flags & Icmpv6Header.FLAG_SOLICITED) != 0, (flags & Icmpv6Header.FLAG_OVERRIDE) != 0,
            (flags & Icmpv6Header.FLAG_ROUTER) != 0, nowNs);
    }

    /**
     * The checks of RFC 4861 §7.1.1 and §7.1.2 common to solicitations and advertisements, each failure counted;
     * notes the link-layer option of type {@code linkOption} in {@link #optionMac}.
     */
    private boolean validNdMessage(Ipv6Packet packet, Icmpv6Header rx, MemorySegment segment, long offset, int length,
                                   int linkOption) {
        if (!wellFormed(packet, rx, segment, offset, length, linkOption)) {
            if (packet.hopLimit == ND_HOP_LIMIT) {
                counters.ndDropInvalid.incrementRelease();
            }
            return false;
        }
        return true;
    }

    private boolean wellFormed(Ipv6Packet packet, Icmpv6Header rx, MemorySegment segment, long offset, int length,
                               int linkOption) {
        optionPresent = false;
        optionMac = -1;
        if (packet.hopLimit != ND_HOP_LIMIT) {
            counters.ndDropHopLimit.incrementRelease();
            return false;
        }
        if (rx.code() != 0 || length < Icmpv6Header.ND_LENGTH || Ipv6Address.isMulticast(rx.targetHigh())) {
            return false;
        }
        final long mac = NdOptions.linkLayerAddress(segment, offset + Icmpv6Header.ND_OPTIONS_OFFSET, offset + length,
            linkOption);
        if (mac == NdOptions.INVALID) {
            return false;
        }
        optionPresent = mac != NdOptions.ABSENT;
        optionMac = mac;
        return true;
    }

    // ---------------------------------------------------------------------------------------------- send

    @Override
    public void solicit(long targetHigh, long targetLow, long mac, long nowNs) {
        final boolean multicast = mac == Ipv6NeighbourCache.MULTICAST;
        final long dh = multicast ? Ipv6Address.LINK_SCOPE_MULTICAST_HIGH : targetHigh;
        final long dl = multicast ? Ipv6Address.solicitedNodeLow(targetLow) : targetLow;
        final int source = addresses.sourceFor(targetHigh, targetLow);
        if (source < 0) {
            counters.txNoSource.incrementRelease();
            return;
        }
        sendSolicitation(addresses.high(source), addresses.low(source), dh, dl, targetHigh, targetLow, true, nowNs);
    }

    private void sendSolicitation(long sh, long sl, long dh, long dl, long th, long tl, boolean withSourceMac,
                                  long nowNs) {
        final int length = Icmpv6Header.ND_LENGTH + (withSourceMac ? LINK_LAYER_OPTION_LENGTH : 0);
        if (ipv6.beginFrom(sh, sl, dh, dl, NextHeader.ICMPV6, length, ND_HOP_LIMIT, 0, nowNs) != Ipv6Layer.OK) {
            return;
        }
        write(Icmpv6Header.NEIGHBOR_SOLICITATION, 0, th, tl,
            withSourceMac ? Icmpv6Header.OPTION_SOURCE_LINK_LAYER : 0, length);
        counters.ndTxSolicitations.incrementRelease();
    }

    private void sendAdvertisement(long dh, long dl, long th, long tl, int flags, long nowNs) {
        final int length = Icmpv6Header.ND_LENGTH + LINK_LAYER_OPTION_LENGTH;
        if (ipv6.beginFrom(th, tl, dh, dl, NextHeader.ICMPV6, length, ND_HOP_LIMIT, 0, nowNs) != Ipv6Layer.OK) {
            return;
        }
        write(Icmpv6Header.NEIGHBOR_ADVERTISEMENT, flags, th, tl, Icmpv6Header.OPTION_TARGET_LINK_LAYER, length);
        counters.ndTxAdvertisements.incrementRelease();
    }

    /** Writes an NS or NA (with our MAC as option {@code option}, if not 0) into the open packet and sends it. */
    private void write(int type, int flags, long th, long tl, int option, int length) {
        final MemorySegment out = ipv6.segment();
        final long at = ipv6.payloadOffset();
        tx.wrap(out, at, length).type(type).code(0).checksum(0).word(flags).target(th, tl);
        if (option != 0) {
            BigEndian.u8(out, at + Icmpv6Header.ND_OPTIONS_OFFSET, option);
            BigEndian.u8(out, at + Icmpv6Header.ND_OPTIONS_OFFSET + 1, 1);
            BigEndian.u48(out, at + Icmpv6Header.ND_OPTIONS_OFFSET + 2, ethernet.mac());
        }
        tx.checksum(InternetChecksum.finish(InternetChecksum.add(ipv6.pseudoHeaderSum(), out, at, length)));
        ipv6.commit();
    }

    // --------------------------------------------------------------------------------------------- timers

    @Override
    public void armTimer(long deadlineNs) {
        neighbourTimer.arm(deadlineNs);
    }

    private void onTimer(long value, long nowNs) {
        if (value == TIMER_DAD) {
            dadStep(nowNs);
            return;
        }
        neighbourTimer.fired();
        final long next = neighbours.expire(nowNs);
        if (next != Long.MAX_VALUE) {
            armTimer(next);
        }
    }
}
