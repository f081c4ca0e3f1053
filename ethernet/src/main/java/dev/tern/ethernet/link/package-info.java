/** The Link SPI: batch receive in place, claim/commit/flush transmit, MAC, MTU and offloads. */
package dev.tern.ethernet.link;
