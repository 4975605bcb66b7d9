package io.quotagate.filter.internal.admission;

/**
 * What {@link Admission#charge} made of one store operation's reply, as one value: the {@link Ticket} of an
 * admitted (or delayed) request, holding what was charged, or the {@link Rejection} of a refused one, holding
 * why, the wait and the published remainders. Nothing is filled in after it is returned.
 */
sealed interface Charged permits Ticket, Rejection {
}
