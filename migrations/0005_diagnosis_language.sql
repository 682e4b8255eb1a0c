-- Diagnoses in the reader's language: each event keeps the Japanese sentence beside the English
-- one (`message`), so that history is read in the language it is asked in. Rows written before
-- this column have it NULL: they are read in English, and say so (`message_lang`).
ALTER TABLE diagnosis_events ADD COLUMN message_ja TEXT;
