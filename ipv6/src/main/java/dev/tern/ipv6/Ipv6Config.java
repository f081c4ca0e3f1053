package dev.tern.ipv6;

import dev.tern.core.net.Ipv6InterfaceAddress;

import java.util.List;

/**
 * Settings of the IPv6 layer, with Linux's defaults. IPv6 runs only when enabled: a stack without it neither
 * answers nor sends a single IPv6 frame, as before IPv6 existed here.
 *
 * @param enabled              IPv6 on this interface (a link-local address from the MAC, plus {@code addresses})
 * @param addresses            static addresses with their on-link prefixes (RFC 4861 §2.1), besides the link-local one
 * @param hopLimit             hop limit of what we send (Linux's {@code hop_limit}, RFC 8200 §3)
 * @param dadTransmits         neighbour solicitations sent for duplicate address detection; 0 skips it (RFC 4862 §5.1
 *                             DupAddrDetectTransmits, Linux's {@code dad_transmits})
 * @param retransmitNs         between solicitations (RFC 4861 §10 RetransTimer, Linux's {@code retrans_time_ms})
 * @param reachableTimeNs      how long a confirmation keeps a neighbour REACHABLE (RFC 4861 §10 REACHABLE_TIME)
 * @param delayFirstProbeNs    DELAY before the first unicast probe (RFC 4861 §10 DELAY_FIRST_PROBE_TIME)
 * @param maxMulticastSolicit  multicast solicitations before resolution fails (MAX_MULTICAST_SOLICIT)
 * @param maxUnicastSolicit    unicast probes before a neighbour is forgotten (MAX_UNICAST_SOLICIT)
 * @param neighbourCacheSize   entries of the neighbour cache
 * @param pendingPerNeighbour  packets held for one neighbour while it resolves (the oldest goes beyond that): enough
 *                             for the fragments of the largest packet at MTU 1500
 * @param pendingTotal         packets held for all neighbours together
 * @param errorsPerSecond      ICMPv6 errors we may send a second (RFC 4443 §2.4(f); Linux's icmp ratelimit)
 * @param errorBurst           ICMPv6 errors we may send at once
 * @param solicitRouters       send router solicitations when the stack starts (RFC 4861 §6.3.7); advertisements
 *                             are heeded either way, as Linux's {@code accept_ra} 1
 * @param slaac                form addresses from advertised prefixes (RFC 4862 §5.5.3; Linux's {@code autoconf});
 *                             off unless asked, so that a stack's addresses are the ones it was given
 */
public record Ipv6Config(boolean enabled, List<Ipv6InterfaceAddress> addresses, int hopLimit, int dadTransmits,
                         long retransmitNs, long reachableTimeNs, long delayFirstProbeNs, int maxMulticastSolicit,
                         int maxUnicastSolicit, int neighbourCacheSize, int pendingPerNeighbour, int pendingTotal,
                         int errorsPerSecond, int errorBurst, boolean solicitRouters, boolean slaac) {
    /** IPv6 off: what a stack does unless asked. */
    public static final Ipv6Config DISABLED = new Ipv6Config(false, List.of(), 64, 1, 1_000_000_000L,
        30_000_000_000L, 5_000_000_000L, 3, 3, 256, 64, 64, 1000, 50, true, false);
    /** Linux's most addresses on one interface would be far more; a host needs a few. */
    public static final int MAX_ADDRESSES = 15;

    public Ipv6Config {
        addresses = List.copyOf(addresses);
        if (addresses.size() > MAX_ADDRESSES) {
            throw new IllegalArgumentException("at most " + MAX_ADDRESSES + " IPv6 addresses, got " + addresses.size());
        }
        if (hopLimit < 1 || hopLimit > 255) {
            throw new IllegalArgumentException("IPv6 hop limit must be 1..255, got " + hopLimit);
        }
        if (dadTransmits < 0 || maxMulticastSolicit < 1 || maxUnicastSolicit < 0 || neighbourCacheSize < 1
            || pendingPerNeighbour < 1 || pendingTotal < 1 || retransmitNs <= 0 || reachableTimeNs <= 0
            || delayFirstProbeNs < 0 || errorsPerSecond < 0 || errorBurst < 0) {
            throw new IllegalArgumentException("IPv6 neighbour discovery settings out of range");
        }
    }

    /** IPv6 on, with these static addresses besides the link-local one. */
    public static Ipv6Config withAddresses(List<Ipv6InterfaceAddress> addresses) {
        return DISABLED.with(true, addresses);
    }

    /** This configuration on or off, with {@code addresses}. */
    public Ipv6Config with(boolean on, List<Ipv6InterfaceAddress> list) {
        return new Ipv6Config(on, list, hopLimit, dadTransmits, retransmitNs, reachableTimeNs, delayFirstProbeNs,
            maxMulticastSolicit, maxUnicastSolicit, neighbourCacheSize, pendingPerNeighbour, pendingTotal,
            errorsPerSecond, errorBurst, solicitRouters, slaac);
    }

    /** This configuration forming addresses from advertised prefixes, or not (SLAAC). */
    public Ipv6Config withSlaac(boolean on) {
        return new Ipv6Config(enabled, addresses, hopLimit, dadTransmits, retransmitNs, reachableTimeNs,
            delayFirstProbeNs, maxMulticastSolicit, maxUnicastSolicit, neighbourCacheSize, pendingPerNeighbour,
            pendingTotal, errorsPerSecond, errorBurst, solicitRouters, on);
    }

    /** This configuration with {@code transmits} DAD solicitations per address. */
    public Ipv6Config withDadTransmits(int transmits) {
        return new Ipv6Config(enabled, addresses, hopLimit, transmits, retransmitNs, reachableTimeNs,
            delayFirstProbeNs, maxMulticastSolicit, maxUnicastSolicit, neighbourCacheSize, pendingPerNeighbour,
            pendingTotal, errorsPerSecond, errorBurst, solicitRouters, slaac);
    }
}
