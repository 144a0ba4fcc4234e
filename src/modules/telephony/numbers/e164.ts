/** Phone numbers and countries as the telephony routes check them (libphonenumber-js). */
import { isSupportedCountry, parsePhoneNumberFromString } from 'libphonenumber-js';

/**
 * The msisdn form (spec 02 part 2.2: E.164 digits without the `+`) of `raw`, given with or without
 * the `+`; undefined when it is not a possible E.164 number.
 */
export function msisdnOf(raw: string): string | undefined {
  const digits = raw.startsWith('+') ? raw.slice(1) : raw;
  if (!/^[1-9]\d{1,14}$/.test(digits)) return undefined;
  const parsed = parsePhoneNumberFromString(`+${digits}`);
  return parsed?.isPossible() ? digits : undefined;
}

/** ISO 3166-1 alpha-2, upper-cased; undefined when no country has that code. */
export function countryOf(raw: string): string | undefined {
  const code = raw.toUpperCase();
  return /^[A-Z]{2}$/.test(code) && isSupportedCountry(code) ? code : undefined;
}

export const COUNTRY_RULE = 'country must be an ISO 3166-1 alpha-2 country code';
export const MSISDN_RULE = 'msisdn must be an E.164 phone number';
