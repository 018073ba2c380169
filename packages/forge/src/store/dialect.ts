/** The SQL dialects the store runs on; its own module so migrations need not import database.ts. */
export type DialectName = 'sqlite' | 'postgres';
