package dev.tern.lab;

/**
 * What a run's UDP cross traffic did, all streams together: frames offered to the bottleneck and frames that left the
 * link, as rates over the whole run, and those that left it carrying CE.
 */
public record UdpResult(long sentFrames, long deliveredFrames, double offeredBps, double deliveredBps, long ceMarks) {
}
