/** Deterministic simulation of several stacks on a memory wire and a virtual clock (tests, demo, research). */
package dev.tern.stack.sim;
