package dev.tern.ipv6;

import dev.tern.core.counters.CountersFile;
import dev.tern.ipv6.wire.Ipv6Header;
import org.agrona.concurrent.status.AtomicCounter;

/** The counters of IPv6, ICMPv6 and neighbour discovery (docs/COUNTERS.md), made once and shared by the three. */
final class Ipv6Counters {
    final AtomicCounter rxPackets;
    final AtomicCounter[] headerDrops;
    final AtomicCounter dropBadSource;
    final AtomicCounter dropNotOurs;
    final AtomicCounter dropBadExtension;
    final AtomicCounter rxAtomicFragments;
    final AtomicCounter dropIncompleteChain;
    final AtomicCounter ndDropFragmented;
    final AtomicCounter dropUnknownNextHeader;
    final AtomicCounter dropOption;
    final AtomicCounter dropRoutingHeader;
    final AtomicCounter rxNoNextHeader;
    final AtomicCounter txPackets;
    final AtomicCounter txNoRoute;
    final AtomicCounter txNoBuffer;
    final AtomicCounter txNoSource;
    final AtomicCounter txFragmentedPackets;
    final AtomicCounter txFragments;

    final AtomicCounter icmpRxMessages;
    final AtomicCounter icmpDropTooShort;
    final AtomicCounter icmpDropBadChecksum;
    final AtomicCounter icmpRxEchoRequests;
    final AtomicCounter icmpRxEchoReplies;
    final AtomicCounter icmpRxErrors;
    final AtomicCounter icmpRxOther;
    final AtomicCounter icmpRxPacketTooBig;
    final AtomicCounter icmpDropErrorNotOurs;
    final AtomicCounter pathMtuUpdates;
    final AtomicCounter icmpTxEchoReplies;
    final AtomicCounter icmpTxEchoRequests;
    final AtomicCounter icmpTxErrors;
    final AtomicCounter icmpTxErrorsRateLimited;
    final AtomicCounter icmpTxErrorsSuppressed;

    final AtomicCounter ndRxSolicitations;
    final AtomicCounter ndRxAdvertisements;
    final AtomicCounter ndTxSolicitations;
    final AtomicCounter ndTxAdvertisements;
    final AtomicCounter ndDropInvalid;
    final AtomicCounter ndDropHopLimit;
    final AtomicCounter ndRxRouterMessagesIgnored;
    final AtomicCounter ndRxRouterAdvertisements;
    final AtomicCounter ndTxRouterSolicitations;
    final AtomicCounter ndRoutersFull;
    final AtomicCounter ndPrefixesFull;
    final AtomicCounter ndSlaacAddresses;
    final AtomicCounter ndSlaacFull;
    final AtomicCounter ndRxRedirectsIgnored;
    final AtomicCounter ndDadCompleted;
    final AtomicCounter ndDadDuplicates;
    final AtomicCounter ndCacheFull;
    final AtomicCounter ndPendingOverflow;
    final AtomicCounter ndPendingNoBuffer;
    final AtomicCounter ndPendingSent;
    final AtomicCounter ndPendingLost;
    final AtomicCounter ndResolveFailed;

    final AtomicCounter mldRxQueries;
    final AtomicCounter mldRxV1Queries;
    final AtomicCounter mldDropInvalid;
    final AtomicCounter mldRxReportsIgnored;
    final AtomicCounter mldTxReports;

    Ipv6Counters(CountersFile counters) {
        rxPackets = counters.counter("ipv6.rx.packets");
        headerDrops = counters.counters("ipv6.drop.", Ipv6Header.DROP_NAMES);
        dropBadSource = counters.counter("ipv6.drop.bad_source");
        dropNotOurs = counters.counter("ipv6.drop.not_ours");
        dropBadExtension = counters.counter("ipv6.drop.bad_extension_header");
        rxAtomicFragments = counters.counter("ipv6.rx.atomic_fragments");
        dropIncompleteChain = counters.counter("ipv6.drop.incomplete_header_chain");
        ndDropFragmented = counters.counter("nd.drop.fragmented");
        dropUnknownNextHeader = counters.counter("ipv6.drop.unknown_next_header");
        dropOption = counters.counter("ipv6.drop.unknown_option");
        dropRoutingHeader = counters.counter("ipv6.drop.routing_header");
        rxNoNextHeader = counters.counter("ipv6.rx.no_next_header");
        txPackets = counters.counter("ipv6.tx.packets");
        txNoRoute = counters.counter("ipv6.tx.no_route");
        txNoBuffer = counters.counter("ipv6.tx.no_buffer");
        txNoSource = counters.counter("ipv6.tx.no_source_address");
        txFragmentedPackets = counters.counter("ipv6.tx.fragmented_packets");
        txFragments = counters.counter("ipv6.tx.fragments");

        icmpRxMessages = counters.counter("icmp6.rx.messages");
        icmpDropTooShort = counters.counter("icmp6.drop.too_short");
        icmpDropBadChecksum = counters.counter("icmp6.drop.bad_checksum");
        icmpRxEchoRequests = counters.counter("icmp6.rx.echo_requests");
        icmpRxEchoReplies = counters.counter("icmp6.rx.echo_replies");
        icmpRxErrors = counters.counter("icmp6.rx.errors");
        icmpRxOther = counters.counter("icmp6.rx.other_types");
        icmpRxPacketTooBig = counters.counter("icmp6.rx.packet_too_big");
        icmpDropErrorNotOurs = counters.counter("icmp6.drop.error_not_ours");
        pathMtuUpdates = counters.counter("icmp6.rx.path_mtu_updates");
        icmpTxEchoReplies = counters.counter("icmp6.tx.echo_replies");
        icmpTxEchoRequests = counters.counter("icmp6.tx.echo_requests");
        icmpTxErrors = counters.counter("icmp6.tx.errors");
        icmpTxErrorsRateLimited = counters.counter("icmp6.tx.errors_rate_limited");
        icmpTxErrorsSuppressed = counters.counter("icmp6.tx.errors_suppressed");

        ndRxSolicitations = counters.counter("nd.rx.solicitations");
        ndRxAdvertisements = counters.counter("nd.rx.advertisements");
        ndTxSolicitations = counters.counter("nd.tx.solicitations");
        ndTxAdvertisements = counters.counter("nd.tx.advertisements");
        ndDropInvalid = counters.counter("nd.drop.invalid");
        ndDropHopLimit = counters.counter("nd.drop.hop_limit");
        ndRxRouterMessagesIgnored = counters.counter("nd.rx.router_solicitations_ignored");
        ndRxRouterAdvertisements = counters.counter("nd.rx.router_advertisements");
        ndTxRouterSolicitations = counters.counter("nd.tx.router_solicitations");
        ndRoutersFull = counters.counter("nd.default_routers_full");
        ndPrefixesFull = counters.counter("nd.prefixes_full");
        ndSlaacAddresses = counters.counter("nd.slaac.addresses");
        ndSlaacFull = counters.counter("nd.slaac.full");
        ndRxRedirectsIgnored = counters.counter("nd.rx.redirects_ignored");
        ndDadCompleted = counters.counter("nd.dad.completed");
        ndDadDuplicates = counters.counter("nd.dad.duplicates");
        ndCacheFull = counters.counter("nd.cache_full");
        ndPendingOverflow = counters.counter("nd.pending.overflow");
        ndPendingNoBuffer = counters.counter("nd.pending.no_buffer");
        ndPendingSent = counters.counter("nd.pending.sent");
        ndPendingLost = counters.counter("nd.pending.no_tx_buffer");
        ndResolveFailed = counters.counter("nd.resolve_failed");

        mldRxQueries = counters.counter("mld.rx.queries");
        mldRxV1Queries = counters.counter("mld.rx.v1_queries");
        mldDropInvalid = counters.counter("mld.drop.invalid_queries");
        mldRxReportsIgnored = counters.counter("mld.rx.reports_ignored");
        mldTxReports = counters.counter("mld.tx.reports");
    }
}
