package dev.tern.afpacket;

/**
 * What an {@link AfPacketLink} has done since it opened: a snapshot, built off the hot path by
 * {@link AfPacketLink#stats()}. The stack publishes these to its counters.
 *
 * @param rxFrames       frames handed to the stack
 * @param rxBytes        their bytes (Ethernet header included, FCS excluded)
 * @param rxTruncated    frames dropped because the kernel could not store them whole (larger than a receive block)
 * @param txFrames       frames the kernel took from the TX ring
 * @param txBytes        their bytes (without the vnet header)
 * @param txRingFull     claims refused because every TX slot was in use (flush more often, or more slots)
 * @param txBusy         flushes the kernel answered with EAGAIN/ENOBUFS; the frames stayed queued and were retried
 * @param txErrors       flushes that failed otherwise (interface down: ENETDOWN/ENXIO); frames stay queued
 * @param txRejected     frames dropped at commit because the kernel would refuse them (bad length or offload request)
 * @param txDropped      committed frames given up after the kernel refused them on many flushes in a row
 * @param txSendCalls    {@code sendto} calls (one per flush with something to send)
 * @param txPending      committed frames still waiting for the kernel
 * @param kernelPackets  packets the kernel saw for this socket ({@code PACKET_STATISTICS}, drops included)
 * @param kernelDrops    packets the kernel dropped because the receive ring was full
 * @param kernelFreezes  times the kernel found the ring full and froze the queue
 */
public record AfPacketStats(
    long rxFrames,
    long rxBytes,
    long rxTruncated,
    long txFrames,
    long txBytes,
    long txRingFull,
    long txBusy,
    long txErrors,
    long txRejected,
    long txDropped,
    long txSendCalls,
    long txPending,
    long kernelPackets,
    long kernelDrops,
    long kernelFreezes) {
}
