/** Nomad's JobValidateResponse (`PUT /v1/validate/job`). Part of the API's own DTOs (see types.ts). */
export interface JobValidateResponse {
  DriverConfigValidated: boolean;
  /** null when the job is valid. */
  ValidationErrors: string[] | null;
  Error: string;
  Warnings: string;
}
