package dev.tern.nio;

import dev.tern.nio.testing.World;

/** {@link ChannelBehaviour} against Tern's provider: two stacks on a memory pipe, each driven by a StackRunner. */
class TernChannelBehaviourTest extends ChannelBehaviour {
    @Override
    protected World makeWorld() {
        return World.tern();
    }
}
