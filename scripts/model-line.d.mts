export function modelLine(input: { apiKey: string; baseUrl: string | undefined; allowed?: string | undefined; emulator: string }): string;
