/*
 * A server an inventory import no longer lists is quarantined: tagged `quarantined`, kept, and not
 * selected by any tag selector (a deployment's `targets.tags`) until a person removes the tag.
 * Listing servers by tag still shows it: that is looking, not targeting.
 */

export const QUARANTINE_TAG = 'quarantined';

/** The MongoDB filter of the servers having all of `tags`, quarantined ones left out. */
export const taggedForTargeting = (tags: readonly string[]) => ({ tags: { $all: [...tags], $ne: QUARANTINE_TAG } });

/** Whether a server with `own` tags is selected by a selector of `tags` (all of them, and not quarantined). */
export const selectedByTags = (own: readonly string[], tags: readonly string[]) => tags.length > 0 && !own.includes(QUARANTINE_TAG) && tags.every((t) => own.includes(t));
