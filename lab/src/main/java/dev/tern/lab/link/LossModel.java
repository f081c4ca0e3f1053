package dev.tern.lab.link;

import java.util.SplittableRandom;

/**
 * Random loss before the queue, from one seeded stream: none, Bernoulli (each frame lost with probability p), or
 * Gilbert-Elliott, a two-state Markov chain per frame (good to bad with {@code p}, bad to good with {@code r}) that
 * loses frames with {@code lossGood} in the good state and {@code lossBad} in the bad one, so losses come in bursts.
 */
public final class LossModel {
    private final SplittableRandom random;
    private final boolean gilbert;
    private final double p;
    private final double r;
    private final double lossGood;
    private final double lossBad;
    private boolean bad;

    private LossModel(long seed, boolean gilbert, double p, double r, double lossGood, double lossBad) {
        this.random = new SplittableRandom(seed);
        this.gilbert = gilbert;
        this.p = probability(p, "loss");
        this.r = probability(r, "bad-to-good");
        this.lossGood = probability(lossGood, "good-state loss");
        this.lossBad = probability(lossBad, "bad-state loss");
    }

    public static LossModel none() {
        return new LossModel(0, false, 0, 0, 0, 0);
    }

    public static LossModel bernoulli(double rate, long seed) {
        return new LossModel(seed, false, rate, 0, 0, 0);
    }

    public static LossModel gilbertElliott(double p, double r, double lossGood, double lossBad, long seed) {
        return new LossModel(seed, true, p, r, lossGood, lossBad);
    }

    /** Whether the next frame is lost. */
    public boolean lose() {
        if (!gilbert) {
            return p > 0 && random.nextDouble() < p;
        }
        bad = bad ? random.nextDouble() >= r : random.nextDouble() < p;
        final double loss = bad ? lossBad : lossGood;
        return loss > 0 && random.nextDouble() < loss;
    }

    /** The long-run share of frames lost. */
    public double meanLoss() {
        if (!gilbert) {
            return p;
        }
        final double badShare = p + r == 0 ? 0 : p / (p + r);
        return badShare * lossBad + (1 - badShare) * lossGood;
    }

    private static double probability(double value, String what) {
        if (!(value >= 0 && value <= 1)) {
            throw new IllegalArgumentException(what + " probability must be between 0 and 1, got " + value);
        }
        return value;
    }
}
