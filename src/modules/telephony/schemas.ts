/** Schemas every telephony route shares: parameters and the error body of spec 02 part 7. */
import { Type } from '@sinclair/typebox';

export const OrgParams = Type.Object({ orgId: Type.String() });

/**
 * Spec 02 part 7's body; `message` is the array of failed rules for field validation. Spec 01's
 * platform answers (access, vendor refusals) add their `code` and fields.
 */
export const ErrorBody = Type.Object(
  {
    statusCode: Type.Integer(),
    error: Type.String(),
    message: Type.Union([Type.String(), Type.Array(Type.String())]),
    code: Type.Optional(Type.String()),
    requiredScope: Type.Optional(Type.String()),
    resourceType: Type.Optional(Type.String()),
    resourceId: Type.Optional(Type.String()),
    vendor: Type.Optional(Type.String()),
    vendorStatus: Type.Optional(Type.Union([Type.Integer(), Type.String()])),
    hint: Type.Optional(Type.String()),
    requestId: Type.Optional(Type.String()),
    retryAfterSeconds: Type.Optional(Type.Integer({ description: 'A 429: seconds until the budget allows again' })),
  },
  { description: 'Error (spec 02 part 7; spec 01 part 7 fields for access and vendor answers)' },
);

export const errors = { 400: ErrorBody, 401: ErrorBody, 403: ErrorBody, 404: ErrorBody, 422: ErrorBody } as const;

export const Success = Type.Object({ success: Type.Literal(true) });
