import type { FastifyReply, FastifyRequest } from 'fastify';
import { z } from 'zod';

/**
 * What a form post hands to the page it redirects to (post, redirect, get): the outcome to
 * announce once, and for a premium submission the payment link with its price. Kept in a
 * short-lived signed cookie rather than the address, so a payment link never lands in an
 * address bar, history or access log, and a reload of the page does not post the form again.
 * The cookie names the listing it is about; another listing's page ignores it.
 */
export const FLASH_COOKIE = 'catalog_flash';
const FLASH_PATH = '/dashboard';
const FLASH_SECONDS = 300;

const FLASH_EVENTS = ['published', 'pending_review', 'updated_live', 'sent_to_review', 'website_live', 'website_review', 'profile_live', 'profile_review', 'upgrade'] as const;

const flashSchema = z.object({
  slug: z.string().max(200),
  event: z.enum(FLASH_EVENTS),
  payment: z.object({ url: z.string().max(2048), amountMinor: z.number().int().positive(), currency: z.string().regex(/^[a-z]{3}$/) }).nullable(),
});

export type Flash = z.infer<typeof flashSchema>;

export function setFlash(reply: FastifyReply, flash: Flash, secure: boolean): void {
  reply.setCookie(FLASH_COOKIE, JSON.stringify(flash), { path: FLASH_PATH, httpOnly: true, sameSite: 'lax', secure, signed: true, maxAge: FLASH_SECONDS });
}

/** The flash for this listing's page, removed once read; undefined when there is none. */
export function takeFlash(request: FastifyRequest, reply: FastifyReply, slug: string, secure: boolean): Flash | undefined {
  const raw = request.cookies[FLASH_COOKIE];
  if (raw === undefined) return undefined;
  const unsigned = request.unsignCookie(raw);
  let flash: Flash | undefined;
  if (unsigned.valid && unsigned.value !== null) {
    try {
      const parsed = flashSchema.safeParse(JSON.parse(unsigned.value));
      if (parsed.success && parsed.data.slug === slug) flash = parsed.data;
    } catch {
      flash = undefined;
    }
  }
  if (flash || !unsigned.valid) reply.clearCookie(FLASH_COOKIE, { path: FLASH_PATH, httpOnly: true, sameSite: 'lax', secure });
  return flash;
}
