package dev.tern.nio;

import dev.tern.nio.testing.World;

/** {@link ChannelBehaviour} against the JDK's own provider on loopback: the reference the Tern run must match. */
class KernelChannelBehaviourTest extends ChannelBehaviour {
    @Override
    protected World makeWorld() {
        return World.kernel();
    }
}
